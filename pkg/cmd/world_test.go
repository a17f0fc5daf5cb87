package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/resource"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	restfake "k8s.io/client-go/rest/fake"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// clock is the fixed time of every command run on a world.
var clock = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// world is a cluster on client-go's fakes: CAPTF objects (as metadata for
// the lists, in full for the gates and the argument resolution), lock
// Leases and pods.
type world struct {
	ns      string
	kube    []runtime.Object
	metas   []runtime.Object
	objects map[string]*unstructured.Unstructured // by path, as the fake REST client asks
}

func newWorld(ns string) *world {
	return &world{ns: ns, objects: map[string]*unstructured.Unstructured{}}
}

// capiOwner is the Cluster API kind that owns each CAPTF kind, as CAPI
// sets it and as CAPTF's preamble requires.
var capiOwner = map[object.Kind]string{object.TerraformCluster: "Cluster", object.TerraformMachine: "Machine", object.TerraformMachinePool: "MachinePool"}

// object adds a CAPTF object, owned by a Cluster API object as CAPI sets.
func (w *world) object(k object.Kind, name string) object.Ref {
	r := object.Ref{Kind: k, Namespace: w.ns, Name: name}
	gv := object.Group + "/" + object.Version
	w.metas = append(w.metas, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: gv, Kind: k.Name}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns, UID: types.UID("uid-" + name)}})
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gv, "kind": k.Name,
		"metadata": map[string]any{
			"name": name, "namespace": w.ns, "uid": "uid-" + name,
			"ownerReferences": []any{map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": capiOwner[k], "name": "prod", "uid": "uid-prod"}},
		},
	}}
	w.objects["/namespaces/"+w.ns+"/"+k.Resource+"/"+name] = u
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
	w.kube = append(w.kube, l)
	return l.Name
}

// pod adds a runner pod in a phase.
func (w *world) pod(name string, phase corev1.PodPhase) {
	w.kube = append(w.kube, &corev1.Pod{
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

// factory is the world's factory: its fake clients, its namespace, and a
// resource builder that answers from its objects.
func (w *world) factory() (*factory, *fake.Clientset) {
	kube := fake.NewClientset(w.kube...)
	scheme := metadatafake.NewTestScheme()
	_ = metav1.AddMetaToScheme(scheme)
	lists := map[schema.GroupVersionResource]string{{Version: "v1", Resource: "secrets"}: "SecretList"}
	var full []runtime.Object
	for _, k := range object.Kinds {
		lists[k.GVR()] = k.Name + "List"
	}
	for _, u := range w.objects {
		full = append(full, u.DeepCopy())
	}
	c := &clients{kube: kube, metadata: metadatafake.NewSimpleMetadataClient(scheme, w.metas...), dynamic: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, full...)}
	c.inspector = &inspect.Inspector{Client: c.kube, Metadata: c.metadata, Dynamic: c.dynamic}
	mapper := w.mapper()
	getter := genericclioptions.NewTestConfigFlags().WithClientConfig(w.kubeconfig()).WithRESTMapper(mapper)
	f := &factory{getter: getter, clients: c, now: func() time.Time { return clock }, getenv: worldEnv}
	f.builder = func() *resource.Builder {
		return resource.NewFakeBuilder(func(gv schema.GroupVersion) (resource.RESTClient, error) {
			return &restfake.RESTClient{
				NegotiatedSerializer: resource.UnstructuredPlusDefaultContentConfig().NegotiatedSerializer,
				GroupVersion:         gv,
				Client:               restfake.CreateHTTPClient(w.serve(kube)),
			}, nil
		}, func() (meta.RESTMapper, error) { return mapper, nil }, func() (restmapper.CategoryExpander, error) {
			return restmapper.SimpleCategoryExpander{}, nil
		})
	}
	return f, kube
}

// kubeconfig has two contexts, "test" and "other", in the world's
// namespace; their servers are never contacted, the clients are fakes.
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

// mapper knows the three CAPTF kinds, Leases and Pods.
func (w *world) mapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, k := range object.Kinds {
		m.Add(schema.GroupVersionKind{Group: object.Group, Version: object.Version, Kind: k.Name}, meta.RESTScopeNamespace)
	}
	m.Add(coordinationv1.SchemeGroupVersion.WithKind("Lease"), meta.RESTScopeNamespace)
	m.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	return m
}

// serve answers the resource builder's GETs: CAPTF objects from the
// world, Leases and pods from the fake clientset.
func (w *world) serve(kube *fake.Clientset) func(*http.Request) (*http.Response, error) {
	return func(r *http.Request) (*http.Response, error) {
		var body any
		if u, ok := w.objects[r.URL.Path]; ok {
			body = u.Object
		} else if dir, name := filepath.Split(r.URL.Path); strings.HasSuffix(dir, "/leases/") {
			l, err := kube.CoordinationV1().Leases(w.ns).Get(r.Context(), name, metav1.GetOptions{})
			if err == nil {
				l.APIVersion, l.Kind = "coordination.k8s.io/v1", "Lease"
				body = l
			}
		} else if strings.HasSuffix(dir, "/pods/") {
			p, err := kube.CoreV1().Pods(w.ns).Get(r.Context(), name, metav1.GetOptions{})
			if err == nil {
				p.APIVersion, p.Kind = "v1", "Pod"
				body = p
			}
		}
		code := http.StatusOK
		if body == nil {
			code = http.StatusNotFound
			body = metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: 404, Message: r.URL.Path + " not found"}
		}
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(bytes.NewReader(b))}, nil
	}
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
