package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"

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

// objectMeta is a CAPTF object as the metadata client returns it.
func objectMeta(r object.Ref) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: object.Group + "/" + object.Version, Kind: r.Kind.Name},
		ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: r.Namespace, UID: uidOf(r)},
	}
}

// uidOf is the uid every fixture gives the object r.
func uidOf(r object.Ref) types.UID {
	return types.UID("uid-" + r.Kind.Code + "-" + r.Namespace + "-" + r.Name)
}

// ownerKinds are the CAPI kinds that own each CAPTF kind.
var ownerKinds = map[string]string{"TerraformCluster": "Cluster", "TerraformMachine": "Machine", "TerraformMachinePool": "MachinePool"}

// cluster is a fake cluster: typed objects and CAPTF objects.
type cluster struct {
	client   *fake.Clientset
	metadata *metadatafake.FakeMetadataClient
	dynamic  *dynamicfake.FakeDynamicClient
}

// full is a CAPTF object in full, as the dynamic client returns it, with
// a minimal valid spec and the given extra fields merged in.
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

func newCluster(objects []runtime.Object, captf ...object.Ref) *cluster {
	var fulls []*unstructured.Unstructured
	for _, r := range captf {
		fulls = append(fulls, full(r, nil))
	}
	return newClusterFull(objects, fulls...)
}

// newClusterFull is newCluster with CAPTF objects given in full.
func newClusterFull(objects []runtime.Object, captf ...*unstructured.Unstructured) *cluster {
	return newClusterWith(objects, nil, nil, captf...)
}

// stateSecret is the metadata of r's state Secret, as the backend labels it.
func stateSecret(r object.Ref) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: object.StateSecretName("default", r.Suffix()), Namespace: r.Namespace,
			Labels: map[string]string{"tfstate": "true", LabelSecretSuffix: r.Suffix(), LabelWorkspace: "default"}},
	}
}

// newClusterWith is newClusterFull with more objects for the metadata
// client (Secrets) and the dynamic client (CAPI Clusters).
func newClusterWith(objects, moreMetas, moreDynamic []runtime.Object, captf ...*unstructured.Unstructured) *cluster {
	scheme := metadatafake.NewTestScheme()
	_ = metav1.AddMetaToScheme(scheme)
	metas, fulls := append([]runtime.Object(nil), moreMetas...), append([]runtime.Object(nil), moreDynamic...)
	lists := map[schema.GroupVersionResource]string{ClusterGVR: "ClusterList"}
	for _, k := range object.Kinds {
		lists[k.GVR()] = k.Name + "List"
	}
	for _, u := range captf {
		k, _ := object.KindByName(u.GetKind())
		m := objectMeta(object.Ref{Kind: k, Namespace: u.GetNamespace(), Name: u.GetName()})
		m.Annotations, m.DeletionTimestamp, m.UID = u.GetAnnotations(), u.GetDeletionTimestamp(), u.GetUID()
		metas, fulls = append(metas, m), append(fulls, u)
	}
	return &cluster{
		client:   fake.NewClientset(objects...),
		metadata: metadatafake.NewSimpleMetadataClient(scheme, metas...),
		dynamic:  dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, fulls...),
	}
}

func (c *cluster) inspect(t *testing.T, s Scope) *Report {
	t.Helper()
	rep, err := c.inspector().Locks(context.Background(), s)
	if err != nil {
		t.Fatalf("Locks: %v", err)
	}
	return rep
}

func (c *cluster) inspector() *Inspector {
	return &Inspector{Client: c.client, Metadata: c.metadata, Dynamic: c.dynamic}
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
