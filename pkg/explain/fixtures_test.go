package explain

import (
	"context"
	"fmt"
	"net/http"
	"strings"
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

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/inspect/cluster"
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

// infoLease is demo's lock held by its runner pod with a consistent ID,
// with extra fields in its lock info.
func infoLease(extra string) *coordinationv1.Lease {
	l := heldBy("root@" + runPod)
	l.Annotations[inspect.AnnotationLock] = strings.TrimSuffix(l.Annotations[inspect.AnnotationLock], "}") + extra + "}"
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

// captfObject is demo as the server holds it, in full: owned by its
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

// apiServer is an in-process API server (internal/fakeapi) holding what an
// explanation reads: typed objects (Leases, pods, Jobs, Events, Secrets)
// and CAPTF and Cluster API objects in full (unstructured). The Explainer
// reads it over HTTP with the clients production builds (cluster.ForConfig).
type apiServer struct {
	*fakeapi.Server
	t *testing.T
}

// newCluster starts a server holding typed and captf. Explain only reads:
// at the test's end every request it made is checked to be a read, and
// every read of Secrets a list of their metadata, never their data.
func newCluster(t *testing.T, typed []runtime.Object, captf ...*unstructured.Unstructured) *apiServer {
	t.Helper()
	objs := append([]runtime.Object(nil), typed...)
	for _, u := range captf {
		objs = append(objs, u)
	}
	s := &apiServer{Server: fakeapi.New(t, objs...), t: t}
	t.Cleanup(func() { readsOnly(t, s.Requests()) })
	return s
}

// readsOnly fails t for any request that is not a read, and for any read
// of Secrets other than a list of their metadata.
func readsOnly(t *testing.T, reqs []fakeapi.Request) {
	t.Helper()
	for _, r := range reqs {
		if r.Method != http.MethodGet || (r.Verb != "get" && r.Verb != "list") {
			t.Errorf("explain wrote: %s %s (%s)", r.Method, r.Path, r.Verb)
		}
		if r.Resource == "secrets" && (r.Verb != "list" || !strings.Contains(r.Accept, "as=PartialObjectMetadataList")) {
			t.Errorf("explain read Secrets other than by metadata: %s %s, Accept %q", r.Verb, r.Path, r.Accept)
		}
	}
}

// stateSecret is a state Secret of demo's, with data the plugin must never
// read.
func stateSecret(name string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: demo.Namespace, Labels: map[string]string{inspect.LabelSecretSuffix: demo.Suffix()}},
		Data:       map[string][]byte{"tfstate": []byte("the state, never read")},
	}
}

// read reads the server for target as the explain command does
// (cluster.Reader.ReadExplained, with the object fetched when the command
// already read it) and explains what it read.
func (s *apiServer) read(target Target, fetched *unstructured.Unstructured) (*v1alpha1.Explanation, []string, error) {
	s.t.Helper()
	r, err := cluster.ForConfig(s.Config())
	if err != nil {
		s.t.Fatal(err)
	}
	snap, around, err := r.ReadExplained(context.Background(), target.Namespace, target.Lease, target.Object, fetched)
	if err != nil {
		return nil, nil, err
	}
	x, warnings := (&Explainer{Now: func() time.Time { return now }}).Explain(target, snap, around)
	return x, warnings, nil
}

// explain explains demo's lock, named as its object; edit, when not nil,
// changes how it is named.
func (s *apiServer) explain(t *testing.T, edit func(*Target)) (*v1alpha1.Explanation, []string) {
	t.Helper()
	target := Target{Namespace: demo.Namespace, Lease: object.LockLeaseName(object.DefaultWorkspace, demo.Suffix()), Object: &demo, Arg: demoArg}
	if edit != nil {
		edit(&target)
	}
	x, warnings, err := s.read(target, nil)
	if err != nil {
		t.Fatalf("Explain: %v", err)
	}
	return x, warnings
}

// refuse makes the server refuse one verb on one resource (of group, when
// it is not "*") as RBAC would: 403 Forbidden.
func refuse(s *fakeapi.Server, verb, group, resource string) {
	refuseIf(s, func(r fakeapi.Request) bool {
		return r.Verb == verb && r.Resource == resource && (group == "*" || r.Group == group)
	})
}

// refuseIf makes the server refuse the requests match accepts, as RBAC
// would.
func refuseIf(s *fakeapi.Server, match func(fakeapi.Request) bool) {
	s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		req := fakeapi.RequestInfo(r)
		if !match(req) {
			return false
		}
		fakeapi.WriteError(w, apierrors.NewForbidden(schema.GroupResource{Group: req.Group, Resource: req.Resource}, req.Name, fmt.Errorf("RBAC: %s denied", req.Verb)))
		return true
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
