package testbed

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// What CAPTF reads around an object before it starts a Job, made so
// that CAPTF would start one: a row that expects "CAPTF clears it" must
// seed the world in which CAPTF's reconcile really reaches the Job
// (captf-io/cluster-api-provider-terraform, the files and commits
// docs/how-it-decides.md names). CAPTF itself does not run in the
// test-bed: what its earlier passes wrote (conditions, the finalizer,
// status.initialization.provisioned) is written as it writes it.

// Cluster API's Machine and MachinePool, as the test-bed serves them.
var (
	MachineGVR     = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machines"}
	MachinePoolGVR = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machinepools"}
)

// CredentialsSecret is the namespace-local Secret a world's objects run
// their Jobs with (spec.identityRef kind Secret): CAPTF uses it as it is,
// without a TerraformClusterIdentity or a mirror (reconcile.go
// localSecret), and creates the runner's ServiceAccount and RoleBinding
// itself (rbac.EnsureRunner).
const CredentialsSecret = "captf-credentials"

// ExternallyManagedAnnotation is Cluster API's managed-by annotation.
const ExternallyManagedAnnotation = "cluster.x-k8s.io/managed-by"

// World says what a world leaves out; its zero value is an object CAPTF
// starts a Job for: owned by a CAPI owner that references it back, with
// a state Secret holding real state, its inputs records, its credentials,
// provisioned, and the conditions CAPTF writes for such an object.
type World struct {
	// Cluster is the CAPI Cluster's name (the object's cluster-name
	// label); "" makes one named "cl-<state suffix>". An existing Cluster
	// of that name is used as it is, as is its TerraformCluster.
	Cluster string
	// Unprovisioned leaves status.initialization.provisioned unset.
	Unprovisioned bool
	// NoState leaves the state Secret out; NoRecords the inputs records.
	NoState, NoRecords bool
	// NoOwner makes no CAPI owner and leaves the object without an
	// owner reference; ForeignOwner makes the owner reference another
	// object (CAPTF's OwnerMismatch).
	NoOwner, ForeignOwner bool
	// NoCluster makes a machine's or pool's owner on a Cluster that does
	// not exist (nor its TerraformCluster).
	NoCluster bool
}

// ClusterOf is the name of the Cluster r belongs to in the world w.
func (w World) ClusterOf(r object.Ref) string {
	if w.Cluster != "" {
		return w.Cluster
	}
	return "cl-" + r.Suffix()
}

// Finalizer is CAPTF's finalizer on an object of kind k.
func Finalizer(k object.Kind) string {
	return map[string]string{
		"TerraformCluster": "terraformcluster.infrastructure.cluster.x-k8s.io",
		"TerraformMachine": "terraformmachine.infrastructure.cluster.x-k8s.io", "TerraformMachinePool": "terraformmachinepool.infrastructure.cluster.x-k8s.io",
	}[k.Name]
}

// ReadyConditions are the conditions CAPTF's reconcile writes for an
// object whose dependencies and credentials are ready and whose state it
// read (api/v1alpha1/conditions_consts.go at
// e899de7e76075540e338ec8fc06c9964ba717e1b).
func ReadyConditions(state bool) []any {
	now := time.Now()
	c := []any{
		Condition("DependenciesReady", "True", "DependenciesReady", "", now),
		Condition("IdentityAllowed", "True", "LocalSecret", "Secret "+CredentialsSecret+" of the namespace is used directly", now),
		Condition("CredentialsMirrored", "True", "Mirrored", "A namespace-local Secret is used directly; nothing is mirrored", now),
		Condition("RunnerRBACReady", "True", "RBACReady", "", now),
	}
	if state {
		return append(c, Condition("StateReadable", "True", "StateRead", "", now))
	}
	return append(c, Condition("StateReadable", "Unknown", "StateNotFound", "No state Secret yet", now))
}

// seedWorld creates r as s describes it, in the world w: the object, its
// owner chain, credentials, state, inputs records and status. An object
// that exists already is left as it is.
func (cs *Clients) seedWorld(ctx context.Context, r object.Ref, s Seeded, w World) error {
	if _, err := cs.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{}); err == nil {
		return nil
	}
	if err := cs.Namespace(ctx, r.Namespace); err != nil {
		return err
	}
	if err := cs.createSecret(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: CredentialsSecret, Namespace: r.Namespace}, Data: map[string][]byte{"CREDENTIALS": []byte("test")}}); err != nil {
		return err
	}
	cluster := w.ClusterOf(r)
	var owners []metav1.OwnerReference
	if !w.NoOwner {
		ref, err := cs.ownerOf(ctx, r, cluster, w)
		if err != nil {
			return err
		}
		owners = []metav1.OwnerReference{ref}
	}
	spec := map[string]any{"source": map[string]any{"image": ModuleImage}, "identityRef": map[string]any{"kind": "Secret", "name": CredentialsSecret}}
	for k, v := range s.Spec {
		spec[k] = v
	}
	labels := map[string]any{ClusterNameLabel: cluster}
	for k, v := range s.Labels {
		labels[k] = v
	}
	meta := map[string]any{"name": r.Name, "namespace": r.Namespace, "labels": labels, "finalizers": []any{Finalizer(r.Kind)}}
	if len(s.Annotations) > 0 {
		a := map[string]any{}
		for k, v := range s.Annotations {
			a[k] = v
		}
		meta["annotations"] = a
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": object.Group + "/" + object.Version, "kind": r.Kind.Name, "metadata": meta, "spec": spec,
	}}
	u.SetOwnerReferences(owners)
	u, err := cs.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	if !w.NoRecords {
		if err := cs.InputsRecords(ctx, r, u.GetUID(), cluster, Record{Applied: !w.Unprovisioned}); err != nil {
			return err
		}
	}
	if !w.NoState {
		if err := cs.StateSecret(ctx, r, cluster); err != nil {
			return err
		}
	}
	status := map[string]any{}
	if !w.Unprovisioned {
		status["initialization"] = map[string]any{"provisioned": true}
	}
	conds := ReadyConditions(!w.NoState)
	for k, v := range s.Status {
		if k != "conditions" {
			status[k] = v
		}
	}
	if extra, ok := s.Status["conditions"].([]any); ok {
		conds = mergeConditions(conds, extra)
	}
	status["conditions"] = conds
	if err := cs.SetStatus(ctx, r, status); err != nil {
		return err
	}
	if s.Delete != nil {
		return cs.DeleteHeldWith(ctx, r, append([]string{Finalizer(r.Kind)}, s.Delete...)...)
	}
	return nil
}

// mergeConditions is base with each condition of extra in place of the
// one of its type, or added.
func mergeConditions(base, extra []any) []any {
	out := append([]any{}, base...)
	for _, e := range extra {
		typ := e.(map[string]any)["type"]
		replaced := false
		for n, b := range out {
			if b.(map[string]any)["type"] == typ {
				out[n], replaced = e, true
			}
		}
		if !replaced {
			out = append(out, e)
		}
	}
	return out
}

// ownerOf makes r's CAPI owner, which references r back as CAPTF's owner
// lookup requires (internal/ownership/ownership.go: infrastructureRef,
// the ownerReference's UID, the cluster name), and returns the owner
// reference: a TerraformCluster's Cluster; a TerraformMachine's Machine
// or a TerraformMachinePool's MachinePool, on the Cluster cluster with
// its TerraformCluster (unless w.NoCluster). w.ForeignOwner makes the
// owner reference another object instead (OwnerMismatch).
func (cs *Clients) ownerOf(ctx context.Context, r object.Ref, cluster string, w World) (metav1.OwnerReference, error) {
	infra := r.Name
	if w.ForeignOwner {
		infra = "someone-else"
	}
	if r.Kind == object.TerraformCluster {
		uid, err := cs.cluster(ctx, r.Namespace, cluster, infra)
		if err != nil {
			return metav1.OwnerReference{}, err
		}
		return metav1.OwnerReference{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster", Name: cluster, UID: uid}, nil
	}
	if !w.NoCluster {
		if _, err := cs.cluster(ctx, r.Namespace, cluster, cluster); err != nil {
			return metav1.OwnerReference{}, err
		}
		if err := cs.parentCluster(ctx, r.Namespace, cluster, r.Kind == object.TerraformMachinePool); err != nil {
			return metav1.OwnerReference{}, err
		}
	}
	bootstrap := "bootstrap-" + r.Suffix()
	if err := cs.createSecret(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: bootstrap, Namespace: r.Namespace}, Data: map[string][]byte{"value": []byte("#cloud-config\n")}}); err != nil {
		return metav1.OwnerReference{}, err
	}
	ref := map[string]any{"apiGroup": object.Group, "kind": r.Kind.Name, "name": infra}
	inner := map[string]any{"clusterName": cluster, "infrastructureRef": ref, "bootstrap": map[string]any{"dataSecretName": bootstrap}}
	kind, gvr, spec := "Machine", MachineGVR, inner
	if r.Kind == object.TerraformMachinePool {
		kind, gvr, spec = "MachinePool", MachinePoolGVR, map[string]any{"clusterName": cluster, "template": map[string]any{"spec": inner}}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": kind,
		"metadata": map[string]any{"name": r.Name, "namespace": r.Namespace, "labels": map[string]any{ClusterNameLabel: cluster}},
		"spec":     spec,
	}}
	u, err := cs.Dynamic.Resource(gvr).Namespace(r.Namespace).Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return metav1.OwnerReference{}, err
	}
	return metav1.OwnerReference{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: kind, Name: r.Name, UID: u.GetUID()}, nil
}

// cluster makes the CAPI Cluster name, whose infrastructureRef names the
// TerraformCluster infra, with its infrastructure provisioned, and returns
// its uid; an existing one is kept.
func (cs *Clients) cluster(ctx context.Context, ns, name, infra string) (types.UID, error) {
	res := cs.Dynamic.Resource(ClusterGVR).Namespace(ns)
	if u, err := res.Get(ctx, name, metav1.GetOptions{}); err == nil {
		return u.GetUID(), nil
	}
	if err := cs.CAPICluster(ctx, ns, name, infra); err != nil {
		return "", err
	}
	patch := []byte(`{"status":{"initialization":{"infrastructureProvisioned":true}}}`)
	u, err := res.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return "", err
	}
	return u.GetUID(), nil
}

// parentCluster makes the TerraformCluster a machine or pool of the
// Cluster cluster inherits from, the one its infrastructureRef names,
// owned by that Cluster; an existing one is kept. A pool's is externally managed: a pool renders its cluster's
// exports, which CAPTF reads from the TerraformCluster's state, or, of an
// externally managed one, takes as {} (shared ReadClusterOutputs).
func (cs *Clients) parentCluster(ctx context.Context, ns, cluster string, forPool bool) error {
	cl, err := cs.Dynamic.Resource(ClusterGVR).Namespace(ns).Get(ctx, cluster, metav1.GetOptions{})
	if err != nil {
		return err
	}
	name, _, _ := unstructured.NestedString(cl.Object, "spec", "infrastructureRef", "name")
	res := cs.Dynamic.Resource(object.TerraformCluster.GVR()).Namespace(ns)
	if _, err := res.Get(ctx, name, metav1.GetOptions{}); err == nil {
		return nil
	}
	meta := map[string]any{"name": name, "namespace": ns, "labels": map[string]any{ClusterNameLabel: cluster}}
	if forPool {
		meta["annotations"] = map[string]any{ExternallyManagedAnnotation: "test-bed"}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": object.Group + "/" + object.Version, "kind": "TerraformCluster", "metadata": meta,
		"spec": map[string]any{"source": map[string]any{"image": ModuleImage}},
	}}
	u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster", Name: cluster, UID: cl.GetUID()}})
	_, err = res.Create(ctx, u, metav1.CreateOptions{})
	return err
}

func (cs *Clients) createSecret(ctx context.Context, s *corev1.Secret) error {
	_, err := cs.Kube.CoreV1().Secrets(s.Namespace).Create(ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// backendLabels are the labels the kubernetes backend sets on each of
// r's state Secrets: its own, and the labels map CAPTF passes it
// (internal/state/labels.go BackendLabels).
func backendLabels(r object.Ref, cluster string) map[string]string {
	l := BackendLabels(r, cluster)
	l["tfstate"], l["tfstateSecretSuffix"], l["tfstateWorkspace"] = "true", r.Suffix(), "default"
	l["app.kubernetes.io/managed-by"] = "terraform"
	return l
}

// StateDoc is a Terraform state file of format version 4, as a runtime
// writes it after an apply, gzip-compressed as the kubernetes backend
// stores it.
func StateDoc(serial int) []byte {
	doc, err := json.Marshal(map[string]any{
		"version": 4, "terraform_version": "1.11.4", "serial": serial, "lineage": "3f2a9c1e-0b7d-4e5f-8a6b-1c2d3e4f5a6b",
		"outputs": map[string]any{}, "resources": []any{}, "check_results": nil,
	})
	if err != nil {
		panic(err) // constant input
	}
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	_, _ = z.Write(doc)
	_ = z.Close()
	return b.Bytes()
}

// InputsHash is the inputs hash a world's state and records carry, in
// CAPTF's form ("h1:" and 64 hex digits).
func InputsHash(r object.Ref) string {
	sum := sha256.Sum256([]byte("inputs/" + r.Namespace + "/" + r.Kind.Name + "/" + r.Name))
	return "h1:" + hex.EncodeToString(sum[:])
}

// StateSecret creates r's state Secret tfstate-default-<suffix> as the
// kubernetes backend writes it after CAPTF's apply: the gzip-compressed
// state under key tfstate, annotation encoding: gzip, the backend's and
// CAPTF's labels (cluster names the Cluster), and the inputs hash CAPTF
// records on it (captf.io/inputs-hash).
func (cs *Clients) StateSecret(ctx context.Context, r object.Ref, cluster string) error {
	return cs.createSecret(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: object.StateSecretName("default", r.Suffix()), Namespace: r.Namespace, Labels: backendLabels(r, cluster),
			Annotations: map[string]string{"encoding": "gzip", "captf.io/inputs-hash": InputsHash(r)},
		},
		Data: map[string][]byte{"tfstate": StateDoc(3)},
	})
}

// StateChunk creates chunk n (≥ 1) of r's state alone, as a runtime that
// writes the chunks one at a time leaves it: CAPTF finds state, which it
// cannot read (state.ErrStateInconsistent).
func (cs *Clients) StateChunk(ctx context.Context, r object.Ref, cluster string, n int) error {
	return cs.createSecret(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: object.StateSecretName("default", r.Suffix()) + "-part-" + strconv.Itoa(n), Namespace: r.Namespace, Labels: backendLabels(r, cluster),
			Annotations: map[string]string{"encoding": "gzip"},
		},
		Data: map[string][]byte{"tfstate": StateDoc(3)[:10]},
	})
}

// StateBackup creates a complete backup set of one chunk of r's state of
// serial, as CAPTF takes it (internal/state/backup.go TakeBackup, at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517): named
// captf-state-backup-<suffix>-<serial>, labelled as state backups of the
// suffix, annotated with its serial, set, chunk and count.
func (cs *Clients) StateBackup(ctx context.Context, r object.Ref, cluster string, serial int, uid types.UID) error {
	data := StateDoc(serial)
	sum := sha256.Sum256(data)
	name := fmt.Sprintf("captf-state-backup-%s-%d", r.Suffix(), serial)
	l := BackendLabels(r, cluster)
	l["captf.io/state-backup"], l["captf.io/state-backup-suffix"] = "true", r.Suffix()
	return cs.createSecret(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: r.Namespace, Labels: l,
			Annotations: map[string]string{
				"captf.io/state-backup-serial": strconv.Itoa(serial), "captf.io/state-backup-set": name,
				"captf.io/state-backup-chunk": "0", "captf.io/state-backup-chunks": "1",
				"captf.io/state-backup-digest": hex.EncodeToString(sum[:]), "captf.io/state-backup-resources": "0",
				"captf.io/state-backup-taken-at": time.Now().UTC().Format(time.RFC3339), "captf.io/inputs-hash": InputsHash(r),
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: object.Group + "/" + object.Version, Kind: r.Kind.Name, Name: r.Name, UID: uid}},
		},
		Data: map[string][]byte{"tfstate": data},
	})
}

// Record says what r's inputs records hold beyond the files.
type Record struct {
	// Applied also makes the applied record and marks the durable one
	// applied: an apply of r succeeded.
	Applied bool
	// Interrupted names an apply Job whose outcome is unconfirmed.
	Interrupted string
}

// InputsRecords creates r's inputs records as CAPTF writes them
// (internal/inputs/durable.go at bfe694cf5a21042ffe2b04fd201cdb6e3cf88245
// WriteAttempt, Promote, MarkApplied): the durable Secret
// captf-inputs-<code>-<name> with the files of its last apply Job and,
// once an apply succeeded, the applied Secret captf-applied-<code>-<name>
// and the applied mark; owned by r (uid), labelled as CAPTF's.
func (cs *Clients) InputsRecords(ctx context.Context, r object.Ref, uid types.UID, cluster string, rec Record) error {
	job := fmt.Sprintf("captf-%s-%s-apply-a1-5a5a5a", r.Kind.Code, r.Name)
	secret := func(name string, extra map[string]string) *corev1.Secret {
		a := map[string]string{
			"captf.io/image": ModuleImage, "captf.io/identity": CredentialsSecret, "captf.io/identity-kind": "Secret",
			"captf.io/inputs-hash": InputsHash(r), "captf.io/job": job,
		}
		for k, v := range extra {
			a[k] = v
		}
		l := OwnerLabels(r)
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: r.Namespace, Labels: l, Annotations: a,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: object.Group + "/" + object.Version, Kind: r.Kind.Name, Name: r.Name, UID: uid}},
			},
			Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{
				"main.tf.json":          []byte(`{"module":{"captf":{"source":"/captf/module"}}}`),
				"terraform.tfvars.json": []byte(`{"cluster_name":"` + cluster + `"}`),
			},
		}
	}
	durable := map[string]string{}
	if rec.Applied {
		durable["captf.io/applied"] = "true"
	}
	if rec.Interrupted != "" {
		durable["captf.io/interrupted-apply"] = rec.Interrupted
	}
	if err := cs.createSecret(ctx, secret(inputsName("captf-inputs-", r), durable)); err != nil || !rec.Applied {
		return err
	}
	return cs.createSecret(ctx, secret(inputsName("captf-applied-", r), nil))
}

// inputsName is strutil.BoundedName: prefix+code+"-"+name, bounded to
// 253 characters by a hash of the name.
func inputsName(prefix string, r object.Ref) string {
	full := prefix + r.Kind.Code + "-" + r.Name
	if len(full) <= 253 {
		return full
	}
	sum := sha256.Sum256([]byte(r.Name))
	suffix := "-" + hex.EncodeToString(sum[:])[:16]
	head := full[:253-len(suffix)]
	for len(head) > 0 && (head[len(head)-1] == '-' || head[len(head)-1] == '.') {
		head = head[:len(head)-1]
	}
	return head + suffix
}

// DeleteNamespace deletes a namespace. With no namespace controller in
// the test-bed it stays Terminating, as a namespace whose contents still
// carry finalizers does: the API server refuses every create in it
// (NamespaceLifecycle), while reads, updates and deletes go on.
func (cs *Clients) DeleteNamespace(ctx context.Context, name string) error {
	return cs.Kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
}

// RetainedBy labels r's state and inputs records as retained by the
// earlier object of uid (internal/state RetainedFromUIDLabel), as
// deletionPolicy Retain leaves them for a later object of the name.
func (cs *Clients) RetainedBy(ctx context.Context, r object.Ref, uid string) error {
	patch := []byte(`{"metadata":{"labels":{"captf.io/retained-from-uid":"` + uid + `"}}}`)
	for _, name := range []string{object.StateSecretName("default", r.Suffix()), inputsName("captf-inputs-", r), inputsName("captf-applied-", r)} {
		_, err := cs.Kube.CoreV1().Secrets(r.Namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// ClusterName is the name of the Cluster API Cluster CAPTF passes in r's
// backend labels (internal/controllers/shared/run.go ClusterName at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517): r's
// cluster.x-k8s.io/cluster-name label, else, for a TerraformCluster, its
// owning Cluster (its ownerReference of kind Cluster); "" when r has none.
func (cs *Clients) ClusterName(ctx context.Context, r object.Ref) (string, error) {
	u, err := cs.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if n := u.GetLabels()[ClusterNameLabel]; n != "" || r.Kind != object.TerraformCluster {
		return n, nil
	}
	for _, o := range u.GetOwnerReferences() {
		if o.Kind == "Cluster" && strings.HasPrefix(o.APIVersion, "cluster.x-k8s.io/") {
			return o.Name, nil
		}
	}
	return "", nil
}
