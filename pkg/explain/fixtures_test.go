package explain

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// now is the Explainer's clock, so that printed commands are fixed.
var now = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// The lock every test explains: demo's, held by its first apply's pod.
var (
	demo     = object.Ref{Name: "demo", Namespace: "default", Kind: object.TerraformCluster}
	demoArg  = "terraformcluster/demo"
	runner1  = "captf-c-demo-apply-a1-d72d2a"
	runPod   = runner1 + "-x7k2p"
	holderID = "9f0c2d4e-1a3b-4c5d-8e6f-7a8b9c0d1e2f"
	demoUID  = types.UID("uid-demo")
)

func ptr[T any](v T) *T { return &v }

// lockLease is demo's lock Lease in workspace ws. A nil holder leaves it
// free; an empty who writes no lock info.
func lockLease(ws string, holder *string, infoID, who string) *coordinationv1.Lease {
	l := &coordinationv1.Lease{}
	l.Name, l.Namespace = object.LockLeaseName(ws, demo.Suffix()), demo.Namespace
	l.Spec.HolderIdentity = holder
	if who != "" {
		l.Annotations = map[string]string{inspect.AnnotationLock: fmt.Sprintf(
			`{"ID":%q,"Operation":"OperationTypeApply","Who":%q,"Version":"1.11.4","Created":"2026-11-30T09:00:00Z"}`, infoID, who)}
	}
	return l
}

// heldBy is demo's lock, held with a consistent ID by who.
func heldBy(who string) *coordinationv1.Lease {
	return lockLease(object.DefaultWorkspace, ptr(holderID), holderID, who)
}

// classify builds a lock's facts as the engine would (demo exists, its
// gates are open), applies the edits, and classifies them: controller
// action, advice and disagreement are tested without any client.
func classify(l *coordinationv1.Lease, edits ...func(*inspect.Facts)) inspect.Result {
	f := inspect.Facts{
		Lease: inspect.ParseLease(l),
		Owner: &inspect.Owner{Ref: demo, UID: demoUID, Exists: ptr(true), Via: "object"},
		Gate:  &jobgate.Gate{State: jobgate.Open},
	}
	for _, e := range edits {
		e(&f)
	}
	return inspect.Result{Facts: f, Decision: inspect.Classify(f)}
}

// Edits of the facts.
func podIs(phase corev1.PodPhase) func(*inspect.Facts) {
	return func(f *inspect.Facts) { f.Pod = &inspect.Pod{Name: f.Lease.Host, Exists: true, Phase: phase} }
}
func ownerExists(b *bool) func(*inspect.Facts) { return func(f *inspect.Facts) { f.Owner.Exists = b } }
func noOwner(f *inspect.Facts)                 { f.Owner = nil }
func gateIs(g *jobgate.Gate) func(*inspect.Facts) {
	return func(f *inspect.Facts) { f.Gate = g }
}

// captfObject is demo as the dynamic client returns it: owned by its
// Cluster (else CAPTF starts no Job), with the given status.
func captfObject(status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(object.Group + "/" + object.Version)
	u.SetKind(demo.Kind.Name)
	u.SetNamespace(demo.Namespace)
	u.SetName(demo.Name)
	u.SetUID(demoUID)
	u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "Cluster", Name: demo.Name, UID: "c-1"}})
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

// stateReadable is a status holding one StateReadable condition.
func stateReadable(status, reason, message string) map[string]any {
	return map[string]any{"conditions": []any{map[string]any{
		"type": "StateReadable", "status": status, "reason": reason, "message": message, "lastTransitionTime": "2026-11-30T09:30:00Z",
	}}}
}

// cluster is a fake API server: typed objects, CAPTF objects in full
// (dynamic) and by metadata, and Secrets by metadata.
type cluster struct {
	client   *fake.Clientset
	dynamic  *dynamicfake.FakeDynamicClient
	metadata *metadatafake.FakeMetadataClient
}

func newCluster(typed []runtime.Object, metas []*metav1.PartialObjectMetadata, captf ...*unstructured.Unstructured) *cluster {
	listKinds := map[schema.GroupVersionResource]string{}
	for _, k := range object.Kinds {
		listKinds[k.GVR()] = k.Name + "List"
	}
	var full []runtime.Object
	meta := make([]runtime.Object, 0, len(metas)+len(captf))
	for _, m := range metas {
		meta = append(meta, m)
	}
	for _, u := range captf {
		full = append(full, u)
		m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(), Annotations: u.GetAnnotations(), DeletionTimestamp: u.GetDeletionTimestamp()}}
		m.APIVersion, m.Kind = u.GetAPIVersion(), u.GetKind()
		meta = append(meta, m)
	}
	scheme := metadatafake.NewTestScheme()
	_ = metav1.AddMetaToScheme(scheme)
	return &cluster{
		client:   fake.NewClientset(typed...),
		dynamic:  dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, full...),
		metadata: metadatafake.NewSimpleMetadataClient(scheme, meta...),
	}
}

// secretMeta is a state Secret of demo's as the metadata client lists it.
func secretMeta(name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: demo.Namespace, Labels: map[string]string{inspect.LabelSecretSuffix: demo.Suffix()}},
	}
}

func (c *cluster) explainer() *Explainer {
	i := &inspect.Inspector{Client: c.client, Metadata: c.metadata, Dynamic: c.dynamic}
	return &Explainer{Inspector: i, Dynamic: c.dynamic, Metadata: c.metadata, Now: func() time.Time { return now }}
}

// explain explains demo's lock, named as its object; edit, when not nil,
// changes how it is named.
func (c *cluster) explain(t *testing.T, edit func(*Target)) (*v1alpha1.Explanation, []string) {
	t.Helper()
	target := Target{Namespace: demo.Namespace, Lease: object.LockLeaseName(object.DefaultWorkspace, demo.Suffix()), Object: &demo, Arg: demoArg}
	if edit != nil {
		edit(&target)
	}
	x, warnings, err := c.explainer().Explain(context.Background(), target)
	if err != nil {
		t.Fatalf("Explain: %v", err)
	}
	return x, warnings
}

// refuse makes one verb on one resource (of group, when it is not "*")
// forbidden, as RBAC would.
func refuse(f *k8stesting.Fake, verb, group, resource string) {
	f.PrependReactor(verb, resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		gr := a.GetResource().GroupResource()
		if group != "*" && gr.Group != group {
			return false, nil, nil
		}
		return true, nil, apierrors.NewForbidden(gr, "", fmt.Errorf("RBAC: %s denied", verb))
	})
}

// lines flattens advice as a reader sees it: each comment as "# ...",
// then its command.
func lines(advice []v1alpha1.Advice) []string {
	var out []string
	for _, a := range advice {
		if a.Comment != "" {
			out = append(out, "# "+a.Comment)
		}
		switch {
		case a.Unprintable != "":
			out = append(out, "# no command printed: "+a.Unprintable)
		case len(a.Argv) > 0:
			out = append(out, a.Command)
		}
	}
	return out
}
