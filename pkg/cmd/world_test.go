package cmd

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// clock is the fixed time of every command run on a world.
var clock = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// world is a cluster of CAPTF objects (unstructured, in full), lock
// Leases, pods and whatever else a test adds, served by one fake API
// server (internal/fakeapi) when the test builds its factory.
type world struct {
	ns   string
	objs []runtime.Object
}

func newWorld(ns string) *world {
	return &world{ns: ns}
}

// add adds any object to the world.
func (w *world) add(obj runtime.Object) { w.objs = append(w.objs, obj) }

// capiOwner is the Cluster API kind that owns each CAPTF kind, as CAPI
// sets it and as CAPTF's preamble requires.
var capiOwner = map[object.Kind]string{object.TerraformCluster: "Cluster", object.TerraformMachine: "Machine", object.TerraformMachinePool: "MachinePool"}

// object adds a CAPTF object, owned by a Cluster API object as CAPI sets.
func (w *world) object(k object.Kind, name string) object.Ref {
	r := object.Ref{Kind: k, Namespace: w.ns, Name: name}
	w.add(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": object.Group + "/" + object.Version, "kind": k.Name,
		"metadata": map[string]any{
			"name": name, "namespace": w.ns, "uid": "uid-" + name,
			"ownerReferences": []any{map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": capiOwner[k], "name": "prod", "uid": "uid-prod"}},
		},
	}})
	return r
}

// lock adds r's lock Lease, held by id with Who when id is set; info
// overrides the lock info when it is set.
func (w *world) lock(r object.Ref, id, who, info string, created time.Time) string {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Name: object.LockLeaseName("default", r.Suffix()), Namespace: w.ns, ResourceVersion: "42",
		CreationTimestamp: metav1.NewTime(created),
		Labels:            map[string]string{"tfstate": "true", inspect.LabelWorkspace: "default", inspect.LabelSecretSuffix: r.Suffix()},
	}}
	if id != "" {
		if info == "" {
			b, _ := json.Marshal(map[string]any{"ID": id, "Operation": "OperationTypeApply", "Who": who, "Version": "1.11.4", "Created": created.Format(time.RFC3339)})
			info = string(b)
		}
		l.Annotations = map[string]string{inspect.AnnotationLock: info}
		l.Spec.HolderIdentity = &id
	}
	w.add(l)
	return l.Name
}

// pod adds a runner pod in a phase.
func (w *world) pod(name string, phase corev1.PodPhase) {
	w.add(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns, Labels: map[string]string{inspect.LabelManaged: "true"}},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
		Status:     corev1.PodStatus{Phase: phase},
	})
}

// verdicts is one lock of each verdict, in namespace infra.
func verdictsWorld() *world {
	w := newWorld("infra")
	created := clock.Add(-2 * time.Hour)
	w.lock(w.object(object.TerraformCluster, "free"), "", "", "", created)
	w.lock(w.object(object.TerraformCluster, "demo"), "3c1e9a5b-7d2f-0e4a-8b6c-1f2e3d4c5b6a", "root@captf-c-demo-apply-a1-d72d2a-x7k2p", "", created)
	w.pod("captf-c-demo-apply-a1-d72d2a-x7k2p", corev1.PodRunning)
	w.lock(w.object(object.TerraformMachine, "web-1"), "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d", "root@captf-m-web-1-apply-a1-0a1b2c-q8w7e", "", created)
	w.lock(w.object(object.TerraformMachine, "db"), "11111111-2222-3333-4444-555555555555", "alice@laptop", "", created)
	w.lock(w.object(object.TerraformMachinePool, "cache"), "22222222-3333-4444-5555-666666666666", "", "not json", created)
	return w
}

// factory serves the world from a fake API server and builds the factory
// the commands run on, as production does but for where the server is:
// the clients come from the server's rest.Config through newClients, the
// constructor Clients uses, and TYPE/NAME arguments resolve through
// cli-runtime's resource builder with a RESTMapper from the server's
// discovery. The kubeconfig (kubeconfig) stays the world's own, with its
// fixed server names: the namespace, the contexts and the connection
// flags that printed commands carry come from it, so the golden files
// never hold the server's port; the command line's flags load it too, as
// the file $KUBECONFIG names.
func (w *world) factory(t testing.TB) (*factory, *fakeapi.Server) {
	t.Helper()
	objs := make([]runtime.Object, len(w.objs))
	for i, o := range w.objs {
		objs[i] = o.DeepCopyObject()
	}
	srv := fakeapi.New(t, objs...)
	c, err := newClients(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	api := newServerGetter(srv.Config())
	// The command line's own flags (factory.flags, with which --contexts
	// reads each context) load the same kubeconfig, from $KUBECONFIG, and
	// never the machine's.
	raw, err := w.kubeconfig().RawConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(raw, path); err != nil {
		t.Fatal(err)
	}
	t.Setenv(clientcmd.RecommendedConfigPathEnvVar, path)
	f := &factory{
		getter:  genericclioptions.NewTestConfigFlags().WithClientConfig(w.kubeconfig()),
		clients: c,
		builder: func() *resource.Builder { return resource.NewBuilder(api) },
		now:     func() time.Time { return clock },
		getenv:  worldEnv,
	}
	return f, srv
}

// serverGetter is what cli-runtime's resource builder reads of a cluster,
// for the fake API server: its rest.Config, and discovery with the
// RESTMapper over it as ConfigFlags builds them (deferred, with kubectl's
// short names), cached in memory rather than on disk.
type serverGetter struct {
	cfg       *rest.Config
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.RESTMapper
}

func newServerGetter(cfg *rest.Config) *serverGetter {
	dc := memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(cfg))
	return &serverGetter{cfg: cfg, discovery: dc, mapper: restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(dc), dc, nil)}
}

func (g *serverGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.cfg), nil }
func (g *serverGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.discovery, nil
}
func (g *serverGetter) ToRESTMapper() (meta.RESTMapper, error) { return g.mapper, nil }

// kubeconfig has two contexts, "test" and "other", in the world's
// namespace. Their servers are never contacted: the clients are the fake
// API server's.
func (w *world) kubeconfig() clientcmd.ClientConfig {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	cfg.AuthInfos["test"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test", Namespace: w.ns}
	// other is a second cluster, for --contexts.
	cfg.Clusters["other"] = &clientcmdapi.Cluster{Server: "https://127.0.0.2:1"}
	cfg.Contexts["other"] = &clientcmdapi.Context{Cluster: "other", AuthInfo: "test", Namespace: w.ns}
	cfg.CurrentContext = "test"
	return clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{})
}

// writes are the requests that change the server's objects, as "verb
// resource namespace/name", in order (a SelfSubjectReview changes nothing).
func writes(srv *fakeapi.Server) []string {
	var out []string
	for _, r := range srv.Requests() {
		switch r.Verb {
		case "create", "update", "patch", "delete", "deletecollection":
			if r.Resource != "selfsubjectreviews" {
				out = append(out, r.Verb+" "+r.Resource+" "+r.Namespace+"/"+r.Name)
			}
		}
	}
	return out
}

// requested are the requests to resources, as "verb resource
// namespace/name", sorted: the concurrent reads arrive in any order.
func requested(srv *fakeapi.Server) []string {
	var out []string
	for _, r := range srv.Requests() {
		if r.Resource != "" {
			out = append(out, r.Verb+" "+r.Resource+" "+r.Namespace+"/"+r.Name)
		}
	}
	slices.Sort(out)
	return out
}

// decodeBody decodes a request's body, protobuf or JSON, as the server does.
func decodeBody(t testing.TB, r fakeapi.Request) runtime.Object {
	t.Helper()
	obj, _, err := clientgoscheme.Codecs.UniversalDeserializer().Decode(r.Body, nil, nil)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Verb, r.Path, err)
	}
	return obj
}

var leasesGVR = coordinationv1.SchemeGroupVersion.WithResource("leases")

// trackedLease is a Lease as the server holds it now.
func trackedLease(t testing.TB, srv *fakeapi.Server, ns, name string) *coordinationv1.Lease {
	t.Helper()
	obj, err := srv.Tracker().Get(leasesGVR, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*coordinationv1.Lease)
}

// events are the events.k8s.io Events the server holds in ns.
func events(t testing.TB, srv *fakeapi.Server, ns string) []eventsv1.Event {
	t.Helper()
	list, err := srv.Tracker().List(eventsv1.SchemeGroupVersion.WithResource("events"), eventsv1.SchemeGroupVersion.WithKind("Event"), ns)
	if err != nil {
		t.Fatal(err)
	}
	return list.(*eventsv1.EventList).Items
}

// ran is one run of the command tree.
type ran struct {
	out, err string
	code     int
}

// captf runs kubectl captf on the factory, as a user would type it.
func captf(t *testing.T, f *factory, args ...string) ran {
	t.Helper()
	s, _, out, errOut := genericiooptions.NewTestIOStreams()
	code := execute(context.Background(), s, args, f)
	return ran{out: out.String(), err: errOut.String(), code: code}
}

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/cmd -run %s -update to write it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file; got:\n%s\nwant:\n%s", path, got, want)
	}
}

// worldEnv is the environment of every command run on a world: the
// kubeconfig it loads is $KUBECONFIG, one file.
func worldEnv(name string) string {
	if name == "KUBECONFIG" {
		return "/home/ops/.kube/config"
	}
	return ""
}
