package inspect

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
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
			cl := newClusterWith([]runtime.Object{held(demo, "root@"+c.host)}, nil, nil, full(demo, nil))
			r := cl.only(t)
			want(t, r, v1alpha1.Stale, c.says)
			if r.Decision.StaleCase != c.stale || r.Decision.CAPTFClears != (c.stale == StaleClears) {
				t.Errorf("case %v clears %v: %s", r.Decision.StaleCase, r.Decision.CAPTFClears, r.Decision.Reason)
			}
			if c.stale == StaleCheckFails && !strings.Contains(r.Decision.Reason, "fails on every reconcile") {
				t.Errorf("reason %q", r.Decision.Reason)
			}
			for _, a := range cl.client.Actions() {
				if a.GetVerb() == "get" && a.GetResource().Resource == "pods" {
					t.Errorf("a request was sent for the holder pod: %v", a)
				}
			}
			// One code path: the single-lock read says the same.
			one, _, err := cl.inspector().Lock(context.Background(), demo.Namespace, object.LockLeaseName("default", demo.Suffix()))
			if err != nil || one.Decision.Reason != r.Decision.Reason || one.Decision.StaleCase != r.Decision.StaleCase {
				t.Errorf("Lock: %v %v %q", err, one.Decision.StaleCase, one.Decision.Reason)
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

// capiCluster is a CAPI Cluster whose infrastructureRef names kind/name.
func capiCluster(ns, name, group, kind, ref string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"infrastructureRef": map[string]any{"apiGroup": group, "kind": kind, "name": ref}},
	}}
	return u
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

// A TerraformMachine inherits from the TerraformCluster CAPTF finds: the
// Cluster's infrastructureRef, or, with the Cluster gone, the only
// TerraformCluster labelled with its name.
func TestInheritanceFindsTheClusterAsCAPTF(t *testing.T) {
	drift0 := func(name, label string) *unstructured.Unstructured {
		r := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: name}
		u := full(r, map[string]any{})
		_ = unstructured.SetNestedField(u.Object, int64(0), "spec", "defaults", "drift", "intervalSeconds")
		if label != "" {
			u.SetLabels(map[string]string{jobgate.ClusterNameLabel: label})
		}
		return u
	}
	m, mu := machine("web", "prod")
	t.Run("through the Cluster", func(t *testing.T) {
		cl := newClusterWith([]runtime.Object{machineLock(m)}, nil, []runtime.Object{capiCluster("default", "prod", object.Group, "TerraformCluster", "prod-tc")}, mu, drift0("prod-tc", ""))
		r := cl.only(t)
		want(t, r, v1alpha1.Stale, "no Job is due", "terraformcluster/prod-tc spec.defaults.drift.intervalSeconds")
		if r.Decision.CAPTFClears {
			t.Error("clears")
		}
	})
	t.Run("the Cluster gone: the only one labelled", func(t *testing.T) {
		r := newClusterWith([]runtime.Object{machineLock(m)}, nil, nil, mu, drift0("orphan", "prod")).only(t)
		want(t, r, v1alpha1.Stale, "no Job is due", "terraformcluster/orphan")
	})
	t.Run("the Cluster gone, two labelled: none", func(t *testing.T) {
		r := newClusterWith([]runtime.Object{machineLock(m)}, nil, nil, mu, drift0("a", "prod"), drift0("b", "prod")).only(t)
		want(t, r, v1alpha1.Stale, "CAPTF clears it with the object's next Job (a drift Job")
	})
	t.Run("not a TerraformCluster", func(t *testing.T) {
		r := newClusterWith([]runtime.Object{machineLock(m)}, nil, []runtime.Object{capiCluster("default", "prod", "infrastructure.example.com", "OtherCluster", "x")}, mu).only(t)
		want(t, r, v1alpha1.Stale, "ClusterNotTerraform")
	})
	t.Run("Cluster unreadable: unsure, with a warning", func(t *testing.T) {
		cl := newClusterWith([]runtime.Object{machineLock(m)}, nil, nil, mu)
		forbid(&cl.dynamic.Fake, "get", "clusters")
		rep := cl.inspect(t, Scope{})
		r := rep.Results[0]
		want(t, r, v1alpha1.Stale, "if a Job starts", "could not be read")
		if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "inherit from their TerraformCluster is shown as unknown") {
			t.Errorf("warnings %q", rep.Warnings)
		}
	})
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
	one, _, err := cl.inspector().Lock(context.Background(), demo.Namespace, object.LockLeaseName("default", demo.Suffix()))
	if err != nil || one.Decision.Reason != r.Decision.Reason {
		t.Errorf("Lock: %v %q", err, one.Decision.Reason)
	}
	// A Foreign lock of an object not being deleted reads no gate.
	plain := newCluster([]runtime.Object{held(demo, "alice@laptop")}, demo)
	if r := plain.only(t); r.Facts.Gate != nil || r.Decision.DeletesLease != nil {
		t.Errorf("gate %+v deletes %+v", r.Facts.Gate, r.Decision.DeletesLease)
	}
}

// The reads around the gates stay bounded: by name up to gateGets, then
// one list each of the owners' kinds, Clusters, TerraformClusters and
// state Secrets, whatever the number of locks.
func TestGateReadsStayBounded(t *testing.T) {
	count := func(n int) int {
		var objs, dyn []runtime.Object
		var fulls []*unstructured.Unstructured
		for i := range n {
			m, mu := machine(fmt.Sprintf("m%d", i), fmt.Sprintf("c%d", i))
			if i%2 == 0 {
				now := metav1.NewTime(created)
				mu.SetDeletionTimestamp(&now)
			}
			objs = append(objs, machineLock(m))
			fulls = append(fulls, mu)
			dyn = append(dyn, capiCluster("default", fmt.Sprintf("c%d", i), object.Group, "TerraformCluster", fmt.Sprintf("tc%d", i)))
		}
		cl := newClusterWith(objs, nil, dyn, fulls...)
		rep := cl.inspect(t, Scope{})
		for _, r := range rep.Results {
			if r.Facts.Gate == nil {
				t.Fatalf("%d locks: no gate for %s: %v", n, r.Facts.Lease.Name, rep.Warnings)
			}
		}
		return len(cl.client.Actions()) + len(cl.metadata.Actions()) + len(cl.dynamic.Actions())
	}
	// Leases, kinds, Jobs, pods (two), holder pods, owners, Clusters,
	// TerraformClusters, state Secrets.
	bound := 1 + 3 + 1 + 2 + holderGets + gateGets + gateGets + gateGets + gateGets
	for _, n := range []int{2, gateGets + 1, 20, 60} {
		got := count(n)
		t.Logf("%d locks: %d requests (bound %d)", n, got, bound)
		if got > bound {
			t.Errorf("%d locks: %d requests, want at most %d", n, got, bound)
		}
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
