package inspect

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// created is the lock time every fixture uses.
var created = time.Date(2026, 9, 26, 15, 53, 38, 315668626, time.UTC)

// lockInfo is a lock-info annotation as Terraform writes it.
func lockInfo(id, who string) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return fmt.Sprintf(`{"ID":%s,"Operation":"OperationTypeApply","Info":"","Who":%s,"Version":"1.11.4","Created":%q,"Path":""}`,
		q(id), q(who), created.Format(time.RFC3339Nano))
}

const lockID = "3c1e9a5b-7d2f-0e4a-8b6c-1f2e3d4c5b6a"

// lease is a lock Lease of the object, as the backend labels it.
func lease(r object.Ref, holder *string, info *string) *coordinationv1.Lease {
	suffix := r.Suffix()
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Name: object.LockLeaseName("default", suffix), Namespace: r.Namespace,
		Labels: map[string]string{
			"tfstate": "true", LabelSecretSuffix: suffix, LabelWorkspace: "default",
			"app.kubernetes.io/managed-by": "terraform",
		},
	}}
	l.Spec.HolderIdentity = holder
	if info != nil {
		l.Annotations = map[string]string{AnnotationLock: *info}
	}
	return l
}

// held is a Lease held by who with a well-formed lock info.
func held(r object.Ref, who string) *coordinationv1.Lease {
	id, info := lockID, lockInfo(lockID, who)
	return lease(r, &id, &info)
}

func pod(ns, name string, phase corev1.PodPhase, managed bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if managed {
		p.Labels = map[string]string{LabelManaged: "true"}
	}
	p.Status.Phase = phase
	return p
}

// uidOf is the uid every fixture gives the object r.
func uidOf(r object.Ref) types.UID {
	return types.UID("uid-" + r.Kind.Code + "-" + r.Namespace + "-" + r.Name)
}

// ownerKinds are the CAPI kinds that own each CAPTF kind.
var ownerKinds = map[string]string{"TerraformCluster": "Cluster", "TerraformMachine": "Machine", "TerraformMachinePool": "MachinePool"}

// full is a CAPTF object in full, as a list returns it, with a minimal
// valid spec and the given extra fields merged in.
func full(r object.Ref, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": object.Group + "/" + object.Version, "kind": r.Kind.Name,
		"metadata": map[string]any{"name": r.Name, "namespace": r.Namespace, "uid": string(uidOf(r)), "ownerReferences": []any{
			map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": ownerKinds[r.Kind.Name], "name": "c", "uid": "1"},
		}},
		"spec": map[string]any{"source": map[string]any{"image": "example.invalid/runner:1"}},
	}}
	for k, v := range fields {
		u.Object[k] = v
	}
	return u
}

func job(ns, name string, owner object.Ref, finished bool) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
		LabelManaged: "true", LabelOwnerKind: owner.Kind.Name, LabelOwnerName: owner.Name,
	}}}
	ctrl := true
	j.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: object.Group + "/" + object.Version, Kind: owner.Kind.Name, Name: owner.Name, UID: uidOf(owner), Controller: &ctrl,
	}}
	if finished {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	}
	return j
}

// stateSecret is r's state Secret, as the backend labels it.
func stateSecret(r object.Ref) *corev1.Secret {
	l := BackendLabels(r, "c") // a TerraformCluster's owner in full
	l["tfstate"], l[LabelSecretSuffix], l[LabelWorkspace] = "true", r.Suffix(), "default"
	l[LabelManagedBy] = "terraform"
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: object.StateSecretName("default", r.Suffix()), Namespace: r.Namespace, Labels: l}}
}

// cluster is a cluster's content, and what reading it gave: the deciding
// layer's tests hand Decide the snapshot the reading layer
// (pkg/inspect/cluster, whose own tests read real responses) makes of
// such a cluster, built here without reading anything.
type cluster struct {
	// objects are the Leases, pods, Jobs and Secrets.
	objects []runtime.Object
	// captf are the CAPTF objects, in full.
	captf []*unstructured.Unstructured
	// notServed is true without CAPTF's CRDs.
	notServed bool
	// kindErr, when set, is the error of listing a CAPTF kind.
	kindErr map[string]error
	// jobsErr is the error of listing the Jobs.
	jobsErr error
	// gatesUnread is true when the owners were listed but not read in
	// full, as no read does today: the decision must still hold.
	gatesUnread bool
	// clusters is what the owner lookup found for each machine and pool.
	clusters map[object.Ref]jobgate.Cluster
	// terminating are the namespaces being deleted.
	terminating map[string]bool
}

func newCluster(objects []runtime.Object, captf ...object.Ref) *cluster {
	var fulls []*unstructured.Unstructured
	for _, r := range captf {
		fulls = append(fulls, full(r, nil))
	}
	return newClusterFull(objects, fulls...)
}

// newClusterFull is newCluster with CAPTF objects given in full.
func newClusterFull(objects []runtime.Object, captf ...*unstructured.Unstructured) *cluster {
	return &cluster{objects: objects, captf: captf}
}

// snapshot is what reading the cluster in scope gives, as Reader.Read
// reads it: the lock Leases in scope; every CAPTF object's metadata and,
// in full, the owners of workspace default's locks KeepInFull keeps; the
// labelled Jobs; the labelled pods and every pod a held lock's host may
// be a runner pod of, a missing one as proven gone; for a deleting owner,
// whether it has state, its records, whether its namespace is being
// deleted. single, when set, is one lock read as
// Reader.ReadLock reads it: any pod its host names, its Lease kept as
// read.
func (c *cluster) snapshot(s Scope, single *coordinationv1.Lease) *Snapshot {
	snap := &Snapshot{Kinds: map[string]KindList{}, Objects: map[object.Ref]*unstructured.Unstructured{},
		Pods: map[string]*Pod{}, Clusters: c.clusters, States: map[string]StateRead{}, JobsErr: c.jobsErr,
		Records: map[string]jobgate.Records{}, Namespaces: map[string]StateRead{}}
	pods, secrets := map[string]*corev1.Pod{}, map[string][]metav1.ObjectMeta{}
	for _, o := range c.objects {
		switch o := o.(type) {
		case *coordinationv1.Lease:
			if single != nil || !IsLockLease(o.Name) || (s.Namespace != "" && o.Namespace != s.Namespace) {
				continue
			}
			if l := ParseLease(o); s.AllWorkspaces || l.Workspace == object.DefaultWorkspace {
				snap.Leases = append(snap.Leases, l)
			}
		case *corev1.Pod:
			pods[Key(o.Namespace, o.Name)] = o
		case *batchv1.Job:
			if o.Labels[LabelManaged] == "true" && c.jobsErr == nil {
				snap.Jobs = append(snap.Jobs, o)
			}
		case *corev1.Secret:
			secrets[o.Namespace] = append(secrets[o.Namespace], o.ObjectMeta)
		}
	}
	if single != nil {
		l := ParseLease(single)
		snap.Leases = []Lease{l}
		snap.Sources = map[string]*coordinationv1.Lease{Key(l.Namespace, l.Name): single}
	}
	if len(snap.Leases) == 0 && single == nil {
		return snap
	}
	// The pods: CAPTF's labelled ones, and each holder's, by name.
	for k, p := range pods {
		if p.Labels[LabelManaged] == "true" {
			snap.Pods[k] = PodFact(p)
		}
	}
	held := map[string]bool{}
	for _, l := range snap.Leases {
		host, ok := HolderPod(l)
		if single != nil && names(l) {
			host, ok = l.Host, true
		}
		if ok {
			if p := pods[Key(l.Namespace, host)]; p != nil {
				snap.Pods[Key(l.Namespace, host)] = PodFact(p)
			} else {
				snap.Pods[Key(l.Namespace, host)] = MissingPod(host)
			}
		}
		if k, h, ok := OwnerKey(l); ok {
			held[k] = held[k] || h
		}
	}
	for _, k := range object.Kinds {
		kl := NewKindList(k)
		switch {
		case c.notServed:
			kl.Served = false
		case c.kindErr[k.Name] != nil:
			kl.Err = c.kindErr[k.Name]
			snap.Warnings = append(snap.Warnings, kl.Err.Error()+"; its objects are shown as unreadable")
		}
		snap.Kinds[k.Name] = kl
	}
	for _, u := range c.captf {
		k, _ := object.KindByName(u.GetKind())
		kl := snap.Kinds[k.Name]
		ref := object.Ref{Kind: k, Namespace: u.GetNamespace(), Name: u.GetName()}
		if !kl.Served || kl.Err != nil || (s.Namespace != "" && ref.Namespace != s.Namespace) {
			continue
		}
		kl.Objects[ref] = ObjectMeta{UID: u.GetUID(), Deleting: u.GetDeletionTimestamp() != nil,
			ClusterLabel: u.GetLabels()[jobgate.ClusterNameLabel], OwnerCluster: ClusterOwner(u.GetOwnerReferences())}
		if h, owns := held[ref.Namespace+"/"+ref.Suffix()]; owns && KeepInFull(h, u.GetDeletionTimestamp() != nil) && !c.gatesUnread {
			snap.Objects[ref] = u
			key, mine := ref.Namespace+"/"+ref.Suffix(), secrets[ref.Namespace]
			if ReadsStateSecrets(u) {
				own := jobgate.StateSecrets(mine, ref.Suffix())
				snap.States[key] = StateRead{Presence: jobgate.StateOf(own, ref.Suffix()), Secrets: own}
			}
			if u.GetDeletionTimestamp() != nil {
				snap.Records[key] = jobgate.RecordsIn(mine, ref.Kind.Code, ref.Name, ref.Suffix())
				ns := StateRead{Presence: jobgate.Absent}
				if c.terminating[ref.Namespace] {
					ns.Presence = jobgate.Present
				}
				snap.Namespaces[ref.Namespace] = ns
			}
		}
	}
	if c.jobsErr != nil {
		snap.Warnings = append(snap.Warnings, c.jobsErr.Error()+"; active Jobs are shown as unreadable")
	}
	return snap
}

func (c *cluster) inspect(t *testing.T, s Scope) *Report {
	t.Helper()
	return Decide(c.snapshot(s, nil))
}

// lock decides the lock Lease namespace/name alone, as read by name.
func (c *cluster) lock(t *testing.T, namespace, name string) Result {
	t.Helper()
	for _, o := range c.objects {
		if l, ok := o.(*coordinationv1.Lease); ok && l.Namespace == namespace && l.Name == name {
			r, ok := DecideLock(c.snapshot(Scope{}, l), namespace, name)
			if !ok {
				t.Fatalf("DecideLock found no %s/%s", namespace, name)
			}
			return r
		}
	}
	t.Fatalf("no Lease %s/%s", namespace, name)
	return Result{}
}

// only inspects a cluster expected to hold exactly one lock.
func (c *cluster) only(t *testing.T) Result {
	t.Helper()
	rep := c.inspect(t, Scope{})
	if len(rep.Results) != 1 {
		t.Fatalf("got %d locks, want 1", len(rep.Results))
	}
	return rep.Results[0]
}
