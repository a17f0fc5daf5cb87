package inspect

import (
	"errors"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// A holder name client-go refuses ("/", "%") fails CAPTF's lock check on
// every reconcile: Stale, but no Job ever clears it, and no request is
// sent for it. A name it sends but no pod can have is an ordinary Stale.
func TestRefusedHolderName(t *testing.T) {
	for _, c := range []struct {
		host  string
		stale StaleCase
		says  string
	}{
		{"captf-c-demo-apply-a1-d72d2a-ab/cd", StaleCheckFails, "may not contain '/'"},
		{"captf-c-demo-apply-a1-d72d2a-ab%cd", StaleCheckFails, "may not contain '%'"},
		{"captf-c-demo-apply-a1-d72d2a-AB_CD", StaleClears, "not a valid pod name"},
	} {
		t.Run(c.host, func(t *testing.T) {
			cl := newClusterFull([]runtime.Object{held(demo, "root@"+c.host)}, full(demo, nil))
			r := cl.only(t)
			want(t, r, v1alpha1.Stale, c.says)
			if r.Decision.StaleCase != c.stale || r.Decision.CAPTFClears != (c.stale == StaleClears) {
				t.Errorf("case %v clears %v: %s", r.Decision.StaleCase, r.Decision.CAPTFClears, r.Decision.Reason)
			}
			if c.stale == StaleCheckFails && !strings.Contains(r.Decision.Reason, "fails on every reconcile") {
				t.Errorf("reason %q", r.Decision.Reason)
			}
			// One code path: the single lock's read says the same.
			one := cl.lock(t, demo.Namespace, object.LockLeaseName("default", demo.Suffix()))
			if one.Decision.Reason != r.Decision.Reason || one.Decision.StaleCase != r.Decision.StaleCase {
				t.Errorf("lock: %v %q", one.Decision.StaleCase, one.Decision.Reason)
			}
		})
	}
}

// With the lock check failing, no Retain or cleanup runs, so CAPTF does
// not delete the Lease; the release of an externally managed object comes
// before the check, and does.
func TestRefusedHolderNameAndDeletion(t *testing.T) {
	now := metav1.NewTime(created)
	host := "root@captf-c-demo-apply-a1-d72d2a-ab/cd"
	retain := full(demo, nil)
	retain.SetDeletionTimestamp(&now)
	_ = unstructured.SetNestedField(retain.Object, "Retain", "spec", "deletionPolicy")
	r := newClusterFull([]runtime.Object{held(demo, host)}, retain).only(t)
	if r.Decision.StaleCase != StaleCheckFails || r.Decision.DeletesLease != nil {
		t.Errorf("retain: %v %+v %q", r.Decision.StaleCase, r.Decision.DeletesLease, r.Decision.Reason)
	}
	ext := full(demo, nil)
	ext.SetDeletionTimestamp(&now)
	ext.SetAnnotations(map[string]string{jobgate.ExternallyManagedAnnotation: "x"})
	ext.SetFinalizers([]string{"terraformcluster.infrastructure.cluster.x-k8s.io"})
	r = newClusterFull([]runtime.Object{held(demo, host)}, ext).only(t)
	if r.Decision.StaleCase != StaleGateClosed || r.Decision.DeletesLease == nil || r.Decision.DeletesLease.Path != jobgate.PathExternallyManaged {
		t.Errorf("externally managed: %v %+v %q", r.Decision.StaleCase, r.Decision.DeletesLease, r.Decision.Reason)
	}
	if !strings.Contains(r.Decision.Reason, "CAPTF deletes this lock Lease itself") || r.Lock().CAPTFDeletesLease == nil {
		t.Errorf("reason %q", r.Decision.Reason)
	}
}

// CAPTF counts a Job as the object's only when the object is its
// controller (jobs/list.go, UID filter): a Job of an earlier object of the
// same name, or one nobody controls, is not active.
func TestActiveJobFollowsTheController(t *testing.T) {
	earlier := job("default", "captf-c-demo-apply-a1-aaaaaa", demo, false)
	earlier.OwnerReferences[0].UID = "uid-of-an-earlier-demo"
	loose := job("default", "captf-c-demo-apply-a2-bbbbbb", demo, false)
	loose.OwnerReferences[0].Controller = nil
	r := newCluster([]runtime.Object{held(demo, "alice@laptop"), earlier, loose}, demo).only(t)
	if r.ActiveJob != nil {
		t.Errorf("active Job %+v, want none", r.ActiveJob)
	}
	own := job("default", "captf-c-demo-apply-a3-cccccc", demo, false)
	r = newCluster([]runtime.Object{held(demo, "alice@laptop"), earlier, own}, demo).only(t)
	if r.ActiveJob == nil || r.ActiveJob.Name != own.Name {
		t.Errorf("active Job %+v, want %s", r.ActiveJob, own.Name)
	}
	// Without the object's uid, no Job is claimed.
	if j := ActiveJob([]*batchv1.Job{own}, demo, ""); j != nil {
		t.Errorf("a Job claimed for an unknown uid: %+v", j)
	}
}

// machine is a provisioned TerraformMachine of Cluster cluster, with its
// stale lock.
func machine(name, cluster string) (object.Ref, *unstructured.Unstructured) {
	r := object.Ref{Kind: object.TerraformMachine, Namespace: "default", Name: name}
	u := full(r, map[string]any{"status": map[string]any{"initialization": map[string]any{"provisioned": true}}})
	u.SetLabels(map[string]string{jobgate.ClusterNameLabel: cluster})
	return r, u
}

func machineLock(r object.Ref) runtime.Object {
	return held(r, "root@captf-m-"+r.Name+"-apply-a1-d72d2a-x7k2p")
}

// A TerraformMachine inherits from the TerraformCluster the owner lookup
// found (pkg/inspect/cluster's tests find it as CAPTF does); when none
// could be read, whether a Job starts is unsure.
func TestInheritanceFromTheClusterFound(t *testing.T) {
	tc := full(object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "prod-tc"}, map[string]any{})
	_ = unstructured.SetNestedField(tc.Object, int64(0), "spec", "defaults", "drift", "intervalSeconds")
	m, mu := machine("web", "prod")
	for _, c := range []struct {
		name   string
		found  jobgate.Cluster
		reason []string
		clears bool
	}{
		{"drift off inherited", jobgate.Cluster{Read: true, Object: tc, Why: "terraformcluster/prod-tc is Cluster prod's infrastructureRef"}, []string{"no Job is due", "terraformcluster/prod-tc spec.defaults.drift.intervalSeconds"}, false},
		{"none found", jobgate.Cluster{Read: true, Why: "Cluster prod is gone and 2 TerraformClusters are labelled"}, []string{"CAPTF clears it with the object's next Job (a drift Job"}, true},
		{"not a TerraformCluster", jobgate.Cluster{Read: true, Why: "Cluster prod uses infrastructure x OtherCluster", NotTerraform: "Cluster prod uses infrastructure x OtherCluster"}, []string{"ClusterNotTerraform"}, false},
		{"unreadable", jobgate.Cluster{Why: "Cluster prod could not be read: Forbidden"}, []string{"if a Job starts", "could not be read"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := newClusterFull([]runtime.Object{machineLock(m)}, mu)
			cl.clusters = map[object.Ref]jobgate.Cluster{m: c.found}
			r := cl.only(t)
			want(t, r, v1alpha1.Stale, c.reason...)
			if r.Decision.CAPTFClears != c.clears {
				t.Errorf("clears %v, want %v", r.Decision.CAPTFClears, c.clears)
			}
		})
	}
}

// CAPTF deletes the Lease of a deleting object whoever holds it: a
// Foreign lock says so too, in the reason and the JSON.
func TestDeletingOwnerDeletesTheLease(t *testing.T) {
	now := metav1.NewTime(created)
	u := full(demo, nil)
	u.SetDeletionTimestamp(&now)
	_ = unstructured.SetNestedField(u.Object, "Retain", "spec", "deletionPolicy")
	cl := newClusterFull([]runtime.Object{held(demo, "alice@laptop")}, u)
	r := cl.only(t)
	want(t, r, v1alpha1.Foreign, "CAPTF deletes this lock Lease itself", "another client can create a new lock")
	l := r.Lock()
	if d := l.CAPTFDeletesLease; d == nil || d.Path != "Retain" || !d.Certain || !strings.Contains(d.Why, "retain.go") {
		t.Errorf("captfDeletesLease %+v", d)
	}
	if one := cl.lock(t, demo.Namespace, object.LockLeaseName("default", demo.Suffix())); one.Decision.Reason != r.Decision.Reason {
		t.Errorf("lock: %q", one.Decision.Reason)
	}
	// A Foreign lock of an object not being deleted: its Lease stays.
	plain := newCluster([]runtime.Object{held(demo, "alice@laptop")}, demo)
	if r := plain.only(t); r.Decision.DeletesLease != nil || r.Lock().CAPTFDeletesLease != nil || strings.Contains(r.Decision.Reason, "deletes this lock Lease") {
		t.Errorf("deletes %+v: %q", r.Decision.DeletesLease, r.Decision.Reason)
	}
}

// What the gates read of the Jobs: the newest finished destroy Job's
// outcome, and when the last apply succeeded.
func TestJobFacts(t *testing.T) {
	at := func(j *batchv1.Job, op string, min int, ok bool) *batchv1.Job {
		j.Labels[LabelOp] = op
		typ := batchv1.JobFailed
		if ok {
			typ = batchv1.JobComplete
		}
		j.Status.Conditions = []batchv1.JobCondition{{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(created.Add(time.Duration(min) * time.Minute))}}
		return j
	}
	older := at(job("default", "d1", demo, false), "destroy", 1, true)
	newer := at(job("default", "d2", demo, false), "destroy", 2, false)
	apply := at(job("default", "a1", demo, false), "apply", 3, true)
	running := job("default", "r1", demo, false)
	active, destroyed, last := jobFacts([]*batchv1.Job{older, newer, apply, running})
	if active != "r1" || destroyed || last == nil || !last.Equal(created.Add(3*time.Minute)) {
		t.Errorf("%q %v %v", active, destroyed, last)
	}
	if _, destroyed, _ := jobFacts([]*batchv1.Job{older}); !destroyed {
		t.Error("a succeeded destroy is not seen")
	}
}

// A lock no Job clears but whose Lease CAPTF deletes is never said to
// stay: the reason says no Job clears it, then the deletion.
func TestNeverIsNotSaidWhereCAPTFDeletesTheLease(t *testing.T) {
	now := metav1.NewTime(created)
	u := full(demo, nil)
	u.SetDeletionTimestamp(&now)
	_ = unstructured.SetNestedField(u.Object, "Retain", "spec", "deletionPolicy")
	for _, l := range []runtime.Object{
		lease(demo, ptr("other-id"), ptr(lockInfo(lockID, "root@"+demoPod))), // ID mismatch
		held(demo, "alice@laptop"),                                   // Foreign
		lease(demo, ptr(lockID), nil),                                // Unknown: no lock info
		lease(demo, ptr(""), ptr(lockInfo(lockID, "root@"+demoPod))), // Unknown: empty holderIdentity
	} {
		r := newClusterFull([]runtime.Object{l}, u.DeepCopy()).only(t)
		if r.Decision.DeletesLease == nil || strings.Contains(r.Decision.Reason, "never clears") || strings.Contains(r.Decision.Reason, "nothing clears it") ||
			!strings.Contains(r.Decision.Reason, "CAPTF deletes this lock Lease itself") {
			t.Errorf("%s: %q", r.Decision.Verdict, r.Decision.Reason)
		}
	}
}

// A deletion under Destroy: the destroy Job clears the lock when it
// renders an inputs record, in a namespace not being deleted; the reads
// around the object (records, namespace) decide it, from the snapshot.
func TestDestroyDeletionFollowsRecordsAndNamespace(t *testing.T) {
	now := metav1.NewTime(created)
	u := full(demo, nil)
	u.SetDeletionTimestamp(&now)
	u.SetFinalizers([]string{"terraformcluster.infrastructure.cluster.x-k8s.io"})
	_ = unstructured.SetNestedField(u.Object, "Destroy", "spec", "deletionPolicy")
	durable, _ := jobgate.InputsSecrets(demo.Kind.Code, demo.Name)
	record := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: demo.Namespace, Name: durable}}
	objs := []runtime.Object{held(demo, "root@"+demoPod), stateSecret(demo), record}

	r := newClusterFull(objs, u.DeepCopy()).only(t)
	want(t, r, v1alpha1.Stale, "the destroy Job")
	if !r.Decision.CAPTFClears {
		t.Errorf("with its inputs record, the destroy Job clears it: %s", r.Decision.Reason)
	}

	c := newClusterFull(objs, u.DeepCopy())
	c.terminating = map[string]bool{demo.Namespace: true}
	r = c.only(t)
	want(t, r, v1alpha1.Stale, "namespace "+demo.Namespace+" is being deleted")
	if r.Decision.CAPTFClears {
		t.Errorf("no Job can start in a terminating namespace: %s", r.Decision.Reason)
	}

	r = newClusterFull(objs[:2], u.DeepCopy()).only(t)
	if r.Decision.CAPTFClears {
		t.Errorf("without an inputs record CAPTF rebuilds them and may start no Job: %s", r.Decision.Reason)
	}
}

// CAPTF's manager sweeps a namespace without Terraform objects, deleting
// every captf.io/managed=true Lease, lock Leases included: a lock there is
// never said to stay; only when every kind was listed and none has an
// object in the namespace (internal/rbac/sweep.go SweepNamespace).
func TestOrphanSweepDeletesTheLease(t *testing.T) {
	managed := func(l *coordinationv1.Lease) *coordinationv1.Lease {
		l.Labels[LabelManaged] = "true"
		l.Labels[LabelOwnerKind], l.Labels[LabelOwnerName] = "TerraformCluster", "demo"
		return l
	}
	for _, l := range []*coordinationv1.Lease{managed(held(demo, "root@"+demoPod)), managed(held(demo, "alice@laptop"))} {
		r := newCluster([]runtime.Object{l}).only(t)
		d := r.Decision.DeletesLease
		if d == nil || d.Path != jobgate.PathOrphanSweep || d.Certain || strings.Contains(r.Decision.Reason, "no controller will clear it") ||
			strings.Contains(r.Decision.Reason, "never clears") || !strings.Contains(r.Decision.Reason, "CAPTF may delete this lock Lease itself") {
			t.Errorf("%s: deletes %+v: %q", r.Decision.Verdict, d, r.Decision.Reason)
		}
	}
	other := object.Ref{Kind: object.TerraformMachine, Namespace: "default", Name: "still-here"}
	for name, c := range map[string]*cluster{
		"another object in the namespace": newCluster([]runtime.Object{managed(held(demo, "alice@laptop"))}, other),
		"no CRDs":                         {objects: []runtime.Object{managed(held(demo, "alice@laptop"))}, notServed: true},
		"a kind unreadable":               {objects: []runtime.Object{managed(held(demo, "alice@laptop"))}, kindErr: map[string]error{"TerraformMachine": errors.New("forbidden")}},
		"not managed":                     newCluster([]runtime.Object{held(object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "gone"}, "alice@laptop")}),
	} {
		if r := c.only(t); r.Decision.DeletesLease != nil {
			t.Errorf("%s: deletes %+v", name, r.Decision.DeletesLease)
		}
	}
}
