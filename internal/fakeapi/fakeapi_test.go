package fakeapi

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	cliresource "k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

var (
	leasesGVR = coordinationv1.SchemeGroupVersion.WithResource("leases")
	tfcGVR    = schema.GroupVersionResource{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Resource: "terraformclusters"}
	tfmGVR    = schema.GroupVersionResource{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Resource: "terraformmachines"}
	secretGVR = corev1.SchemeGroupVersion.WithResource("secrets")
)

func lease(ns, name string, labels map[string]string) *coordinationv1.Lease {
	holder := "someone"
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
}

func captf(kind, ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": kind,
		"metadata": map[string]any{"namespace": ns, "name": name, "uid": "uid-" + name},
		"spec":     map[string]any{"source": map[string]any{"image": "example.invalid/runner:1"}, "replicas": int64(2)},
	}}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// protobufConfig is a config as the plugin's typed client has it.
func protobufConfig(s *Server) *rest.Config {
	cfg := s.Config()
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	return cfg
}

func TestTypedListGetInProtobufAndJSON(t *testing.T) {
	s := New(t, lease("a", "l1", map[string]string{"tfstate": "true"}), lease("a", "l2", nil), lease("b", "l3", map[string]string{"tfstate": "true"}))
	for name, cfg := range map[string]*rest.Config{"protobuf": protobufConfig(s), "json": s.Config()} {
		t.Run(name, func(t *testing.T) {
			kube := kubernetes.NewForConfigOrDie(cfg)
			s.ResetRequests()
			all, err := kube.CoordinationV1().Leases("").List(ctx(t), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(all.Items); got != "a/l1 a/l2 b/l3" {
				t.Errorf("all leases: %s", got)
			}
			if all.ResourceVersion != "3" {
				t.Errorf("list resourceVersion %q, want 3", all.ResourceVersion)
			}
			some, err := kube.CoordinationV1().Leases("a").List(ctx(t), metav1.ListOptions{LabelSelector: "tfstate=true"})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(some.Items); got != "a/l1" {
				t.Errorf("selected leases: %s", got)
			}
			one, err := kube.CoordinationV1().Leases("b").List(ctx(t), metav1.ListOptions{FieldSelector: "metadata.name=l3"})
			if err != nil || names(one.Items) != "b/l3" {
				t.Errorf("by name: %v %v", one, err)
			}
			l, err := kube.CoordinationV1().Leases("b").Get(ctx(t), "l3", metav1.GetOptions{})
			if err != nil || *l.Spec.HolderIdentity != "someone" || l.ResourceVersion != "3" {
				t.Errorf("get: %+v %v", l, err)
			}
			if n := s.Count("list", "leases"); n != 3 {
				t.Errorf("%d lists of leases, want 3", n)
			}
			if r := s.Requests()[0]; r.Path != "/apis/coordination.k8s.io/v1/leases" || r.Namespace != "" || r.Resource != "leases" {
				t.Errorf("first request %+v", r)
			}
		})
	}
}

func names(ls []coordinationv1.Lease) string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Namespace+"/"+l.Name)
	}
	return strings.Join(out, " ")
}

// TestProtobufEnvelope reads a list as the plugin's stream does: protobuf
// for Leases, in the runtime.Unknown envelope after the magic number, and
// JSON for a custom resource on the same (protobuf) client.
func TestProtobufEnvelope(t *testing.T) {
	s := New(t, lease("a", "l1", nil), captf("TerraformCluster", "a", "demo"))
	rc := kubernetes.NewForConfigOrDie(protobufConfig(s)).CoreV1().RESTClient()
	body, err := rc.Get().AbsPath("/apis/coordination.k8s.io/v1").Resource("leases").Stream(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(body)
	body.Close()
	if !bytes.HasPrefix(b, []byte("k8s\x00")) {
		t.Fatalf("no protobuf magic: %q", b)
	}
	var unk runtime.Unknown
	if err := unk.Unmarshal(b[4:]); err != nil {
		t.Fatal(err)
	}
	if unk.APIVersion != "coordination.k8s.io/v1" || unk.Kind != "LeaseList" {
		t.Errorf("envelope type %+v", unk.TypeMeta)
	}
	var list coordinationv1.LeaseList
	if err := list.Unmarshal(unk.Raw); err != nil || len(list.Items) != 1 || list.Items[0].Name != "l1" {
		t.Errorf("list %+v %v", list, err)
	}

	// A watch: length-prefixed frames of WatchEvents, each object in its envelope.
	body, err = rc.Get().AbsPath("/apis/coordination.k8s.io/v1").Resource("leases").Param("watch", "true").Param("timeoutSeconds", "1").Stream(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(body)
	body.Close()
	var ev metav1.WatchEvent
	if len(b) < 4 || int(binary.BigEndian.Uint32(b)) != len(b)-4 {
		t.Fatalf("watch frames %q", b)
	}
	if err := ev.Unmarshal(b[4:]); err != nil || ev.Type != "ADDED" || !bytes.HasPrefix(ev.Object.Raw, []byte("k8s\x00")) {
		t.Errorf("watch event %+v %v", ev, err)
	}

	body, err = rc.Get().AbsPath("/apis/infrastructure.cluster.x-k8s.io/v1alpha1").Namespace("a").Resource("terraformclusters").Stream(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(body)
	body.Close()
	var u unstructured.UnstructuredList
	if err := u.UnmarshalJSON(b); err != nil || len(u.Items) != 1 || u.GetKind() != "TerraformClusterList" {
		t.Errorf("custom resources are JSON: %q %v", b, err)
	}
	if n, _, _ := unstructured.NestedInt64(u.Items[0].Object, "spec", "replicas"); n != 2 {
		t.Errorf("replicas %d", n)
	}
}

func TestUpdateConflictAndResourceVersions(t *testing.T) {
	s := New(t, lease("a", "l1", nil))
	leases := kubernetes.NewForConfigOrDie(protobufConfig(s)).CoordinationV1().Leases("a")
	read, err := leases.Get(ctx(t), "l1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first := read.DeepCopy()
	first.Spec.HolderIdentity = nil
	written, err := leases.Update(ctx(t), first, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if written.ResourceVersion == read.ResourceVersion || written.Spec.HolderIdentity != nil {
		t.Errorf("update: resourceVersion %s after %s, holder %v", written.ResourceVersion, read.ResourceVersion, written.Spec.HolderIdentity)
	}
	stale := read.DeepCopy()
	_, err = leases.Update(ctx(t), stale, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("update from a stale read: %v, want a Conflict", err)
	}
	var status apierrors.APIStatus
	if errors.As(err, &status); status.Status().Code != http.StatusConflict || !strings.Contains(err.Error(), "the object has been modified") {
		t.Errorf("conflict %+v", status.Status())
	}
	// Without a resourceVersion an update is unconditional, as for Leases on an API server.
	stale.ResourceVersion = ""
	if _, err := leases.Update(ctx(t), stale, metav1.UpdateOptions{}); err != nil {
		t.Errorf("unconditional update: %v", err)
	}
	// The tracker checks too.
	if err := s.Tracker().Update(leasesGVR, read, "a"); !apierrors.IsConflict(err) {
		t.Errorf("tracker update from a stale read: %v", err)
	}
	_, err = leases.Get(ctx(t), "gone", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("get of a missing lease: %v", err)
	}
	if d := err.(apierrors.APIStatus).Status().Details; d == nil || d.Name != "gone" || d.Kind != "leases" || d.Group != "coordination.k8s.io" {
		t.Errorf("not found details %+v", d)
	}
	_, err = leases.Update(ctx(t), lease("a", "gone", nil), metav1.UpdateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("update of a missing lease: %v", err)
	}
	// Deletion with a stale precondition is a Conflict; with none, it deletes.
	stalePre := read.ResourceVersion
	if err := leases.Delete(ctx(t), "l1", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stalePre}}); !apierrors.IsConflict(err) {
		t.Errorf("delete with a stale precondition: %v", err)
	}
	if err := leases.Delete(ctx(t), "l1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := leases.Delete(ctx(t), "l1", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("second delete: %v", err)
	}
}

func TestCreate(t *testing.T) {
	s := NewWithOptions(t, Options{User: authenticationv1.UserInfo{Username: "alice", Groups: []string{"ops"}}})
	kube := kubernetes.NewForConfigOrDie(protobufConfig(s))
	ev, err := kube.EventsV1().Events("a").Create(ctx(t), &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "x."}, Note: "hello"}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ev.Name, "x.") || len(ev.Name) != 7 || ev.Namespace != "a" || ev.UID == "" || ev.CreationTimestamp.IsZero() || ev.ResourceVersion == "" {
		t.Errorf("created %+v", ev.ObjectMeta)
	}
	if _, err := kube.EventsV1().Events("a").Create(ctx(t), ev, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create: %v", err)
	}
	if _, err := kube.CoreV1().Events("a").Get(ctx(t), ev.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("core/v1 events are stored apart: %v", err)
	}
	r, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || r.Status.UserInfo.Username != "alice" || r.Status.UserInfo.Groups[0] != "ops" {
		t.Errorf("self subject review %+v %v", r, err)
	}
	ns, err := kube.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{})
	if err != nil || ns.Name != "team" {
		t.Fatalf("namespace %v %v", ns, err)
	}
	if _, err := kube.CoreV1().Namespaces().Get(ctx(t), "team", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
}

func TestDynamicAndPatch(t *testing.T) {
	s := New(t, captf("TerraformCluster", "a", "demo"), captf("TerraformCluster", "b", "edge"), captf("TerraformMachine", "a", "web-1"))
	dyn := dynamic.NewForConfigOrDie(s.Config())
	all, err := dyn.Resource(tfcGVR).List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != 2 || all.Items[0].GetName() != "demo" || all.Items[1].GetName() != "edge" || all.GetResourceVersion() == "" {
		t.Errorf("terraformclusters %+v", all)
	}
	machines, err := dyn.Resource(tfmGVR).Namespace("a").List(ctx(t), metav1.ListOptions{})
	if err != nil || len(machines.Items) != 1 {
		t.Errorf("terraformmachines %v %v", machines, err)
	}
	pools, err := dyn.Resource(schema.GroupVersionResource{Group: tfcGVR.Group, Version: tfcGVR.Version, Resource: "terraformmachinepools"}).List(ctx(t), metav1.ListOptions{})
	if err != nil || len(pools.Items) != 0 || pools.GetKind() != "TerraformMachinePoolList" {
		t.Errorf("no terraformmachinepools: %v %v", pools, err)
	}
	clusters := dyn.Resource(schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "clusters"})
	if _, err := clusters.Namespace("a").Create(ctx(t), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": map[string]any{"name": "c1"},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	before, _ := dyn.Resource(tfcGVR).Namespace("a").Get(ctx(t), "demo", metav1.GetOptions{})
	patch := []byte(`{"metadata":{"annotations":{"captf.io/reconcile":"now"}}}`)
	after, err := dyn.Resource(tfcGVR).Namespace("a").Patch(ctx(t), "demo", types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetAnnotations()["captf.io/reconcile"] != "now" || after.GetResourceVersion() == before.GetResourceVersion() {
		t.Errorf("patched %v (resourceVersion %s before)", after.Object, before.GetResourceVersion())
	}
	if img, _, _ := unstructured.NestedString(after.Object, "spec", "source", "image"); img != "example.invalid/runner:1" {
		t.Errorf("the patch lost the spec: %v", after.Object)
	}
	jsonPatch := []byte(`[{"op":"add","path":"/metadata/labels","value":{"x":"y"}}]`)
	if p, err := dyn.Resource(tfcGVR).Namespace("a").Patch(ctx(t), "demo", types.JSONPatchType, jsonPatch, metav1.PatchOptions{}); err != nil || p.GetLabels()["x"] != "y" {
		t.Errorf("json patch %v %v", p, err)
	}
	if _, err := dyn.Resource(tfcGVR).Namespace("a").Patch(ctx(t), "demo", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); !apierrors.IsUnsupportedMediaType(err) {
		t.Errorf("a strategic merge patch of a custom resource: %v", err)
	}
	stale := []byte(`{"metadata":{"resourceVersion":"` + before.GetResourceVersion() + `","annotations":{"x":"y"}}}`)
	if _, err := dyn.Resource(tfcGVR).Namespace("a").Patch(ctx(t), "demo", types.MergePatchType, stale, metav1.PatchOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("a patch with a stale resourceVersion: %v", err)
	}
	if _, err := dyn.Resource(tfcGVR).Namespace("a").Patch(ctx(t), "nope", types.MergePatchType, patch, metav1.PatchOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("patch of a missing object: %v", err)
	}
	kube := kubernetes.NewForConfigOrDie(protobufConfig(s))
	if _, err := kube.CoreV1().Pods("a").Create(ctx(t), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := kube.CoreV1().Pods("a").Patch(ctx(t), "p", types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil || p.Annotations["captf.io/reconcile"] != "now" {
		t.Errorf("strategic merge patch of a pod: %v %v", p, err)
	}
}

func TestCustomResourcesNotServed(t *testing.T) {
	s := NewWithOptions(t, Options{CustomResources: []CustomResource{}})
	_, err := dynamic.NewForConfigOrDie(s.Config()).Resource(tfcGVR).List(ctx(t), metav1.ListOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("list of a kind without its CRD: %v", err)
	}
}

func TestMetadata(t *testing.T) {
	secret := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "tfstate-default-x", Labels: map[string]string{"tfstate": "true"}},
	}
	s := New(t, secret, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "other"}, Data: map[string][]byte{"k": []byte("v")}},
		captf("TerraformMachine", "a", "web-1"))
	md := metadata.NewForConfigOrDie(s.Config())
	secrets, err := md.Resource(secretGVR).Namespace("a").List(ctx(t), metav1.ListOptions{LabelSelector: "tfstate=true"})
	if err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 1 || secrets.Items[0].Name != "tfstate-default-x" || secrets.ResourceVersion == "" {
		t.Errorf("secrets %+v", secrets)
	}
	machines, err := md.Resource(tfmGVR).Namespace("").List(ctx(t), metav1.ListOptions{})
	if err != nil || len(machines.Items) != 1 || machines.Items[0].UID != "uid-web-1" {
		t.Errorf("machines %+v %v", machines, err)
	}
	m, err := md.Resource(tfmGVR).Namespace("a").Get(ctx(t), "web-1", metav1.GetOptions{})
	if err != nil || m.Name != "web-1" {
		t.Errorf("machine %+v %v", m, err)
	}
	w, err := md.Resource(tfmGVR).Namespace("a").Watch(ctx(t), metav1.ListOptions{ResourceVersion: machines.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := dynamic.NewForConfigOrDie(s.Config()).Resource(tfmGVR).Namespace("a").Delete(ctx(t), "web-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if e := <-w.ResultChan(); e.Type != watch.Deleted || e.Object.(*metav1.PartialObjectMetadata).Name != "web-1" {
		t.Errorf("metadata watch event %v %#v", e.Type, e.Object)
	}
	// A Secret given as metadata is a Secret to the typed client.
	typed, err := kubernetes.NewForConfigOrDie(protobufConfig(s)).CoreV1().Secrets("a").List(ctx(t), metav1.ListOptions{})
	if err != nil || len(typed.Items) != 2 {
		t.Errorf("typed secrets %v %v", typed, err)
	}
	if proto := s.Requests()[0].Accept; !strings.HasPrefix(proto, "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList") {
		t.Errorf("the metadata client asked for %q", proto)
	}
}

func TestPages(t *testing.T) {
	s := New(t, lease("a", "l1", nil), lease("a", "l2", nil), lease("a-b", "l3", nil), lease("b", "l4", nil))
	leases := kubernetes.NewForConfigOrDie(protobufConfig(s)).CoordinationV1().Leases("")
	var got []string
	opts := metav1.ListOptions{Limit: 3}
	for {
		page, err := leases.List(ctx(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, names(page.Items))
		if page.Continue == "" {
			break
		}
		if *page.RemainingItemCount != 1 {
			t.Errorf("remaining %d", *page.RemainingItemCount)
		}
		opts.Continue = page.Continue
	}
	if strings.Join(got, "|") != "a/l1 a/l2 a-b/l3|b/l4" {
		t.Errorf("pages %q", got)
	}
	if _, err := leases.List(ctx(t), metav1.ListOptions{FieldSelector: "spec.holderIdentity=x"}); !apierrors.IsBadRequest(err) {
		t.Errorf("an unsupported field selector: %v", err)
	}
}

// recorder is an informer's event handler that keeps what it saw.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, s)
}

func (r *recorder) handler() cache.ResourceEventHandlerFuncs {
	name := func(o any) string {
		if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = d.Obj
		}
		return o.(metav1.Object).GetName()
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { r.add("ADDED " + name(o)) },
		UpdateFunc: func(_, o any) { r.add("MODIFIED " + name(o)) },
		DeleteFunc: func(o any) { r.add("DELETED " + name(o)) },
	}
}

func (r *recorder) waitFor(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		got := strings.Join(r.events, ", ")
		r.mu.Unlock()
		if got == strings.Join(want, ", ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("events: %s\nwant:   %s", got, strings.Join(want, ", "))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestInformer(t *testing.T) {
	for _, watchList := range []bool{false, true} {
		name := "list then watch"
		if watchList {
			name = "watch list"
		}
		t.Run(name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
			s := New(t, lease("a", "l1", map[string]string{"tfstate": "true"}), lease("a", "other", nil))
			kube := kubernetes.NewForConfigOrDie(protobufConfig(s))
			f := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace("a"),
				informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "tfstate=true" }))
			inf := f.Coordination().V1().Leases().Informer()
			var rec recorder
			if _, err := inf.AddEventHandler(rec.handler()); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			defer close(stop)
			f.Start(stop)
			if !cache.WaitForCacheSync(stop, inf.HasSynced) {
				t.Fatal("no sync")
			}
			rec.waitFor(t, "ADDED l1")

			leases := kube.CoordinationV1().Leases("a")
			if _, err := leases.Create(ctx(t), lease("a", "l2", map[string]string{"tfstate": "true"}), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			l1, _ := leases.Get(ctx(t), "l1", metav1.GetOptions{})
			l1.Spec.HolderIdentity = nil
			if _, err := leases.Update(ctx(t), l1, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			// Through the tracker, and in and out of the selector.
			other, _ := s.Tracker().Get(leasesGVR, "a", "other")
			other.(*coordinationv1.Lease).Labels = map[string]string{"tfstate": "true"}
			if err := s.Tracker().Update(leasesGVR, other, "a"); err != nil {
				t.Fatal(err)
			}
			if err := s.Tracker().Delete(leasesGVR, "a", "l2"); err != nil {
				t.Fatal(err)
			}
			if _, err := leases.Patch(ctx(t), "other", types.MergePatchType, []byte(`{"metadata":{"labels":null}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := s.Tracker().Add(lease("b", "elsewhere", map[string]string{"tfstate": "true"})); err != nil {
				t.Fatal(err)
			}
			rec.waitFor(t, "ADDED l1", "ADDED l2", "MODIFIED l1", "ADDED other", "DELETED l2", "DELETED other")
			watches := 0
			for _, r := range s.Requests() {
				if r.Verb == "watch" {
					watches++
					if watchList != (r.Query.Get("sendInitialEvents") == "true") {
						t.Errorf("watch %v", r.Query)
					}
				}
			}
			if watches != 1 || s.Count("list", "leases") != map[bool]int{false: 1, true: 0}[watchList] {
				t.Errorf("%d watches, %d lists", watches, s.Count("list", "leases"))
			}
		})
	}
}

// TestWatchFromResourceVersion watches from a list's resourceVersion over
// HTTP, in JSON, and sees the writes made in between, as an informer
// needs.
func TestWatchFromResourceVersion(t *testing.T) {
	s := New(t, captf("TerraformCluster", "a", "demo"))
	res := dynamic.NewForConfigOrDie(s.Config()).Resource(tfcGVR).Namespace("a")
	list, err := res.List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Tracker().Add(captf("TerraformCluster", "a", "second")); err != nil {
		t.Fatal(err)
	}
	if err := s.Tracker().Add(captf("TerraformCluster", "b", "elsewhere")); err != nil {
		t.Fatal(err)
	}
	w, err := res.Watch(ctx(t), metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := s.Tracker().Delete(tfcGVR, "a", "demo"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ADDED second", "DELETED demo"} {
		select {
		case e := <-w.ResultChan():
			if got := string(e.Type) + " " + e.Object.(*unstructured.Unstructured).GetName(); got != want {
				t.Errorf("event %s, want %s", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no event %s", want)
		}
	}

	// Raw: a JSON object a line, as the API server streams them.
	rc, err := rest.RESTClientFor(func() *rest.Config {
		c := s.Config()
		c.GroupVersion = &schema.GroupVersion{Group: tfcGVR.Group, Version: tfcGVR.Version}
		c.APIPath = "/apis"
		c.NegotiatedSerializer = unstructuredSerializer{}
		return c
	}())
	if err != nil {
		t.Fatal(err)
	}
	body, err := rc.Get().Resource("terraformclusters").Param("watch", "true").Param("timeoutSeconds", "1").Stream(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(body) // ends after timeoutSeconds
	body.Close()
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"type":"ADDED","object":{"apiVersion":"infrastructure.cluster.x-k8s.io/v1alpha1","kind":"TerraformCluster"`) {
		t.Errorf("watch body %s", b)
	}
}

// unstructuredSerializer is enough of a NegotiatedSerializer for a raw
// REST client's Stream.
type unstructuredSerializer struct{ runtime.NegotiatedSerializer }

func (unstructuredSerializer) SupportedMediaTypes() []runtime.SerializerInfo {
	return []runtime.SerializerInfo{{MediaType: "application/json", Serializer: unstructured.UnstructuredJSONScheme}}
}

func (unstructuredSerializer) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}

func (unstructuredSerializer) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}

func TestTrackerWatch(t *testing.T) {
	s := New(t)
	w, err := s.Tracker().Watch(leasesGVR, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for i := range 150 { // more than the tracker's own watchers hold unread
		if err := s.Tracker().Add(lease("a", string(rune('a'+i%26))+string(rune('a'+i/26)), nil)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 150 {
		e := <-w.ResultChan()
		if e.Type != watch.Added {
			t.Fatalf("event %d: %v", i, e.Type)
		}
	}
}

// TestBuilder resolves TYPE/NAME arguments as the plugin does: through
// cli-runtime's resource builder and a RESTMapper from discovery.
func TestBuilder(t *testing.T) {
	s := New(t, captf("TerraformCluster", "infra", "demo"), lease("infra", "x", nil))
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["fake"] = &clientcmdapi.Cluster{Server: s.URL()}
	cfg.AuthInfos["fake"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["fake"] = &clientcmdapi.Context{Cluster: "fake", AuthInfo: "fake", Namespace: "infra"}
	cfg.CurrentContext = "fake"
	dc := memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(s.Config()))
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(dc)
	getter := genericclioptions.NewTestConfigFlags().
		WithClientConfig(clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{})).
		WithDiscoveryClient(dc).WithRESTMapper(mapper)
	infos, err := cliresource.NewBuilder(getter).Unstructured().NamespaceParam("infra").DefaultNamespace().
		ResourceTypeOrNameArgs(true, "terraformcluster/demo", "lease/x").Flatten().Do().Infos()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].Mapping.Resource != tfcGVR || infos[0].Name != "demo" || infos[1].Mapping.Resource != leasesGVR || infos[1].Name != "x" {
		t.Fatalf("infos %+v", infos)
	}
	if u := infos[0].Object.(*unstructured.Unstructured); u.GetUID() != "uid-demo" {
		t.Errorf("object %v", u.Object)
	}
	_, err = cliresource.NewBuilder(getter).Unstructured().NamespaceParam("infra").DefaultNamespace().
		ResourceTypeOrNameArgs(true, "terraformmachine/missing").Flatten().Do().Infos()
	if !apierrors.IsNotFound(err) {
		t.Errorf("a missing object: %v", err)
	}
	gvk, err := mapper.KindFor(schema.GroupVersionResource{Resource: "events"})
	if err != nil || gvk.Group != "" {
		t.Errorf("events are core's first: %v %v", gvk, err)
	}
}

func TestIntercept(t *testing.T) {
	s := New(t, lease("a", "l1", nil))
	kube := kubernetes.NewForConfigOrDie(protobufConfig(s))
	leases := kube.CoordinationV1().Leases("a")
	remove := s.Intercept(Fail(func(r Request) bool { return r.Verb == "list" && r.Resource == "leases" },
		apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "", errors.New(`User "bob" cannot list resource "leases"`))))
	_, err := leases.List(ctx(t), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "bob"`) {
		t.Fatalf("list: %v", err)
	}
	if _, err := leases.Get(ctx(t), "l1", metav1.GetOptions{}); err != nil {
		t.Errorf("get, not intercepted: %v", err)
	}
	remove()
	if _, err := leases.List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Errorf("list after remove: %v", err)
	}
	if n := s.Count("list", "leases"); n != 2 {
		t.Errorf("%d lists recorded, want 2 (intercepted ones count)", n)
	}

	// A body cut short: the client fails to decode it.
	remove = s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"LeaseList","apiVersion":"coordination.k8s.io/v1","items":[{"metadata":`))
		return true
	})
	if _, err := kubernetes.NewForConfigOrDie(s.Config()).CoordinationV1().Leases("a").List(ctx(t), metav1.ListOptions{}); err == nil {
		t.Error("a truncated list decoded")
	}
	remove()

	// A request that hangs until the client gives up; the body is there to read.
	bodies := make(chan []byte, 1)
	s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if RequestInfo(r).Verb != "update" {
			return false
		}
		b, _ := io.ReadAll(r.Body)
		bodies <- b
		<-r.Context().Done()
		return true
	})
	short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	l1, _ := leases.Get(ctx(t), "l1", metav1.GetOptions{})
	if _, err := leases.Update(short, l1, metav1.UpdateOptions{}); err == nil {
		t.Error("a hung update returned")
	}
	body := <-bodies
	if !bytes.HasPrefix(body, []byte("k8s\x00")) {
		t.Errorf("update body %q, want protobuf", body)
	}
	updates := 0
	for _, r := range s.Requests() {
		if r.Verb == "update" {
			updates++
			if r.Name != "l1" || r.Namespace != "a" || !bytes.Equal(r.Body, body) {
				t.Errorf("recorded %+v", r)
			}
		}
	}
	if updates != 1 {
		t.Errorf("%d updates recorded", updates)
	}
	s.ResetRequests()
	if len(s.Requests()) != 0 {
		t.Error("requests left after reset")
	}
}

// TestClose: a watch in flight does not keep Close waiting.
func TestClose(t *testing.T) {
	s := New(t)
	w, err := kubernetes.NewForConfigOrDie(s.Config()).CoreV1().Pods("").Watch(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	s.Intercept(func(w http.ResponseWriter, r *http.Request) bool { <-r.Context().Done(); return true })
	go func() { _, _ = http.Get(s.URL() + "/api") }()
	time.Sleep(50 * time.Millisecond)
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waits for requests in flight")
	}
}

func TestDiscoveryDocuments(t *testing.T) {
	s := New(t)
	dc := discovery.NewDiscoveryClientForConfigOrDie(s.Config())
	groups, resources, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	var gs []string
	for _, g := range groups {
		gs = append(gs, g.Name)
	}
	if got := strings.Join(gs, " "); got != " coordination.k8s.io batch events.k8s.io authentication.k8s.io infrastructure.cluster.x-k8s.io cluster.x-k8s.io" {
		t.Errorf("groups %q", got)
	}
	var rs []string
	for _, l := range resources {
		for _, r := range l.APIResources {
			rs = append(rs, l.GroupVersion+"/"+r.Name)
		}
	}
	if len(rs) != 12 {
		t.Errorf("resources %v", rs)
	}
	v, err := dc.ServerVersion()
	if err != nil || v.Minor != "34" {
		t.Errorf("version %v %v", v, err)
	}
	b, _ := json.Marshal(groups)
	if !strings.Contains(string(b), `"preferredVersion":{"groupVersion":"infrastructure.cluster.x-k8s.io/v1alpha1"`) {
		t.Errorf("groups %s", b)
	}
}
