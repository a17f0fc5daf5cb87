package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// The reading layer's tests put a cluster's content into the in-process
// API server (internal/fakeapi) and read it through a Reader built as the
// plugin builds it (ForConfig), over real HTTP: the request plan, the
// streaming decode and the error handling are what they check, and
// inspect.Decide then says whether the snapshot holds what the verdicts
// need. The shapes below are those of pkg/inspect's fixtures, which build
// the snapshots this layer is to produce.

// lockCreated is the lock time every fixture uses.
var lockCreated = time.Date(2026, 9, 26, 15, 53, 38, 315668626, time.UTC)

// fixtureLockID is the holderIdentity and lock-info ID of a held fixture.
const fixtureLockID = "3c1e9a5b-7d2f-0e4a-8b6c-1f2e3d4c5b6a"

// lockInfoOf is a lock-info annotation as Terraform writes it.
func lockInfoOf(id, who string) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return fmt.Sprintf(`{"ID":%s,"Operation":"OperationTypeApply","Info":"","Who":%s,"Version":"1.11.4","Created":%q,"Path":""}`,
		q(id), q(who), lockCreated.Format(time.RFC3339Nano))
}

// lockName is the lock Lease name of r's default workspace.
func lockName(r object.Ref) string { return object.LockLeaseName(object.DefaultWorkspace, r.Suffix()) }

// lockLease is the lock Lease of r, labelled as the backend labels it;
// holder and info nil leave it unheld and without lock info.
func lockLease(r object.Ref, holder, info *string) *coordinationv1.Lease {
	suffix := r.Suffix()
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Name: lockName(r), Namespace: r.Namespace,
		Labels: map[string]string{
			"tfstate": "true", inspect.LabelSecretSuffix: suffix, inspect.LabelWorkspace: object.DefaultWorkspace,
			"app.kubernetes.io/managed-by": "terraform",
		},
	}}
	l.Spec.HolderIdentity = holder
	if info != nil {
		l.Annotations = map[string]string{inspect.AnnotationLock: *info}
	}
	return l
}

// heldLease is r's lock Lease held by who with a well-formed lock info.
func heldLease(r object.Ref, who string) *coordinationv1.Lease {
	id, info := fixtureLockID, lockInfoOf(fixtureLockID, who)
	return lockLease(r, &id, &info)
}

// runnerPodName is the name of a pod of r's first apply Job.
func runnerPodName(r object.Ref) string {
	return "captf-" + r.Kind.Code + "-" + r.Name + "-apply-a1-d72d2a-x7k2p"
}

// runnerJobName is the name of r's apply Job of attempt a.
func runnerJobName(r object.Ref, a int) string {
	return fmt.Sprintf("captf-%s-%s-apply-a%d-d72d2a", r.Kind.Code, r.Name, a)
}

// podOf is a pod in phase, with CAPTF's label when labelled.
func podOf(ns, name string, phase corev1.PodPhase, labelled bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if labelled {
		p.Labels = map[string]string{inspect.LabelManaged: "true"}
	}
	p.Status.Phase = phase
	return p
}

// uidFor is the uid every fixture gives the object r.
func uidFor(r object.Ref) types.UID {
	return types.UID("uid-" + r.Kind.Code + "-" + r.Namespace + "-" + r.Name)
}

// capiOwnerKinds are the CAPI kinds that own each CAPTF kind.
var capiOwnerKinds = map[string]string{"TerraformCluster": "Cluster", "TerraformMachine": "Machine", "TerraformMachinePool": "MachinePool"}

// captfObject is a CAPTF object as stored, owned by its CAPI kind, with a
// minimal spec and the given top-level fields merged in.
func captfObject(r object.Ref, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": object.Group + "/" + object.Version, "kind": r.Kind.Name,
		"metadata": map[string]any{"name": r.Name, "namespace": r.Namespace, "uid": string(uidFor(r)), "ownerReferences": []any{
			map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": capiOwnerKinds[r.Kind.Name], "name": "owner", "uid": "1"},
		}},
		"spec": map[string]any{"source": map[string]any{"image": "example.invalid/runner:1"}},
	}}
	for k, v := range fields {
		u.Object[k] = v
	}
	return u
}

// deleting marks u as being deleted.
func deleting(u *unstructured.Unstructured) *unstructured.Unstructured {
	now := metav1.NewTime(lockCreated)
	u.SetDeletionTimestamp(&now)
	u.SetFinalizers([]string{strings.ToLower(u.GetKind()) + "." + object.Group})
	return u
}

// machineOf is a provisioned TerraformMachine of CAPI Cluster cluster.
func machineOf(ns, name, cluster string) (object.Ref, *unstructured.Unstructured) {
	r := object.Ref{Kind: object.TerraformMachine, Namespace: ns, Name: name}
	u := captfObject(r, map[string]any{"status": map[string]any{"initialization": map[string]any{"provisioned": true}}})
	u.SetLabels(map[string]string{jobgate.ClusterNameLabel: cluster})
	return r, u
}

// terraformCluster is a TerraformCluster whose machines inherit drift
// off (spec.defaults.drift.intervalSeconds 0), labelled with its CAPI
// Cluster's name when label is set.
func terraformCluster(ns, name, label string) *unstructured.Unstructured {
	u := captfObject(object.Ref{Kind: object.TerraformCluster, Namespace: ns, Name: name}, nil)
	_ = unstructured.SetNestedField(u.Object, int64(0), "spec", "defaults", "drift", "intervalSeconds")
	if label != "" {
		u.SetLabels(map[string]string{jobgate.ClusterNameLabel: label})
	}
	return u
}

// capiCluster is a CAPI Cluster whose spec.infrastructureRef is ref.
func capiCluster(ns, name string, ref map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": ns, "uid": "uid-cluster-" + name},
		"spec":     map[string]any{"infrastructureRef": ref},
	}}
}

// infraRef is a v1beta2 infrastructureRef (apiGroup, kind, name).
func infraRef(group, kind, name string) map[string]any {
	return map[string]any{"apiGroup": group, "kind": kind, "name": name}
}

// runnerJob is a runner Job of owner, controlled by it, as CAPTF labels
// it; finished gives it a true Complete condition.
func runnerJob(owner object.Ref, name string, finished bool) *batchv1.Job {
	ctrl := true
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: owner.Namespace, Labels: map[string]string{
		inspect.LabelManaged: "true", inspect.LabelOwnerKind: owner.Kind.Name, inspect.LabelOwnerName: owner.Name,
	}, OwnerReferences: []metav1.OwnerReference{{
		APIVersion: object.Group + "/" + object.Version, Kind: owner.Kind.Name, Name: owner.Name, UID: uidFor(owner), Controller: &ctrl,
	}}}}
	if finished {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	}
	return j
}

// stateSecretOf is r's state Secret, as the backend labels it, with data
// the plugin must never read.
func stateSecretOf(r object.Ref) *corev1.Secret {
	l := inspect.BackendLabels(r, "owner") // a TerraformCluster's owner in captfObject
	l["tfstate"], l[inspect.LabelSecretSuffix], l[inspect.LabelWorkspace] = "true", r.Suffix(), object.DefaultWorkspace
	l[inspect.LabelManagedBy] = "terraform"
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: object.StateSecretName(object.DefaultWorkspace, r.Suffix()), Namespace: r.Namespace, Labels: l},
		Data: map[string][]byte{"tfstate": []byte("SECRET-STATE-DATA")}}
}

// otherLeases are Leases in a lock namespace that are no locks: CAPTF's
// own and a node's.
func otherLeases(ns string) []runtime.Object {
	return []runtime.Object{
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "captf-run-0b41ac905b337e94-c", Namespace: ns, Labels: map[string]string{"captf.io/lease": "run", "tfstate": "true"}}},
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "captf-cluster-0123456789abcdef", Namespace: ns, Labels: map[string]string{"tfstate": "true"}}},
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: ns}},
	}
}

// newReader serves objs and builds a Reader for the server as the plugin
// builds it (pkg/cmd/clients.go: cluster.ForConfig of the rest.Config).
func newReader(t testing.TB, objs ...runtime.Object) (*fakeapi.Server, *Reader) {
	t.Helper()
	return newReaderWith(t, fakeapi.Options{}, objs...)
}

func newReaderWith(t testing.TB, o fakeapi.Options, objs ...runtime.Object) (*fakeapi.Server, *Reader) {
	t.Helper()
	srv := fakeapi.NewWithOptions(t, o, objs...)
	r, err := ForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	return srv, r
}

// testCtx is a context that ends with the test, or after a generous
// failure timeout.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// readAll reads scope and decides it.
func readAll(t testing.TB, r *Reader, s inspect.Scope) (*inspect.Snapshot, *inspect.Report) {
	t.Helper()
	snap, err := r.Read(testCtx(t), s)
	if err != nil {
		t.Fatalf("Read(%+v): %v", s, err)
	}
	return snap, inspect.Decide(snap)
}

// readOne reads one lock as explain and unlock do, and decides it.
func readOne(t testing.TB, r *Reader, ns, name string) (*inspect.Snapshot, inspect.Result) {
	t.Helper()
	snap, err := r.ReadLock(testCtx(t), ns, name)
	if err != nil {
		t.Fatalf("ReadLock(%s/%s): %v", ns, name, err)
	}
	res, ok := inspect.DecideLock(snap, ns, name)
	if !ok {
		t.Fatalf("DecideLock found no %s/%s in its own snapshot", ns, name)
	}
	return snap, res
}

// resultOf is the result of the lock Lease ns/name in rep.
func resultOf(t testing.TB, rep *inspect.Report, ns, name string) inspect.Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.Facts.Lease.Namespace == ns && r.Facts.Lease.Name == name {
			return r
		}
	}
	t.Fatalf("no result for %s/%s among %d", ns, name, len(rep.Results))
	return inspect.Result{}
}

// wantVerdict checks a result's verdict and that its reason says each of
// reason.
func wantVerdict(t testing.TB, r inspect.Result, v v1alpha1.Verdict, reason ...string) {
	t.Helper()
	if r.Decision.Verdict != v {
		t.Errorf("%s: verdict %s (%s), want %s", r.Facts.Lease.Name, r.Decision.Verdict, r.Decision.Reason, v)
		return
	}
	for _, s := range reason {
		if !strings.Contains(r.Decision.Reason, s) {
			t.Errorf("%s: reason %q lacks %q", r.Facts.Lease.Name, r.Decision.Reason, s)
		}
	}
}

// forbidden fails every request match accepts as RBAC does, with the API
// server's message.
func forbidden(srv *fakeapi.Server, match func(fakeapi.Request) bool) {
	srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		req := fakeapi.RequestInfo(r)
		if !match(req) {
			return false
		}
		gr := schema.GroupResource{Group: req.Group, Resource: req.Resource}
		fakeapi.WriteError(w, apierrors.NewForbidden(gr, req.Name, fmt.Errorf("User %q cannot %s resource %q in API group %q in the namespace %q",
			"bob", req.Verb, req.Resource, req.Group, req.Namespace)))
		return true
	})
}

// is matches requests of verb on resource.
func is(verb, resource string) func(fakeapi.Request) bool {
	return func(r fakeapi.Request) bool { return r.Verb == verb && r.Resource == resource }
}

// countWhere counts the requests match accepts.
func countWhere(reqs []fakeapi.Request, match func(fakeapi.Request) bool) int {
	n := 0
	for _, r := range reqs {
		if match(r) {
			n++
		}
	}
	return n
}

// describe lists requests, one a line, for failure messages.
func describe(reqs []fakeapi.Request) string {
	var b strings.Builder
	for _, r := range reqs {
		fmt.Fprintf(&b, "\n  %s %s", r.Verb, r.Path)
		if q := r.Query.Encode(); q != "" {
			b.WriteString("?" + q)
		}
	}
	return b.String()
}

// isNoLease is whether err is an *inspect.NoLeaseError.
func isNoLease(err error) bool {
	var none *inspect.NoLeaseError
	return errors.As(err, &none)
}
