package testbed

import (
	"context"
	"encoding/json"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// Labels CAPTF puts on its runner Jobs and pods, and passes to the backend.
const (
	labelOwnerKind = "captf.infrastructure.cluster.x-k8s.io/owner-kind"
	labelOwnerName = "captf.infrastructure.cluster.x-k8s.io/owner-name"
	labelManaged   = "captf.io/managed"
	labelMove      = "clusterctl.cluster.x-k8s.io/move"
)

// OwnerLabels are CAPTF's owner labels of an object, which its runner
// Jobs and pods carry: the owner's kind and name, and captf.io/managed.
func OwnerLabels(r object.Ref) map[string]string {
	return map[string]string{labelOwnerKind: r.Kind.Name, labelOwnerName: labelValue(r.Name), labelManaged: "true"}
}

// BackendLabels are the labels CAPTF passes to the kubernetes backend for
// an object of the Cluster API Cluster cluster, which the backend puts on
// the lock Lease and on every state Secret: the owner labels, the
// cluster's name and clusterctl's move label
// (captf-io/cluster-api-provider-terraform internal/state/labels.go
// BackendLabels at e049ea25e6205660141388a3dc45817fcf7cb6d7, and its
// locked fixture internal/state/testdata/fixtures/terraform-locked.yaml
// at d6986f4646de003dbde2b12ec279505307a1b667). CAPTF takes the cluster's
// name from the Cluster it found for the object: a TerraformCluster's
// owning Cluster, the Cluster a machine's or pool's
// cluster.x-k8s.io/cluster-name label names (internal/controllers/shared
// LookupCluster, and terraformmachine/adapter.go Owner at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517); like the owner's name, a
// name longer than a label value is its hash (state.LabelValue).
func BackendLabels(r object.Ref, cluster string) map[string]string {
	l := OwnerLabels(r)
	l[ClusterNameLabel], l[labelMove] = labelValue(cluster), ""
	return l
}

// ObjectCluster is the Cluster an object Object makes belongs to: the
// name of the owner reference it gives every object (OwnerRef).
const ObjectCluster = "cluster"

// labelValue is a name as CAPTF puts it in a label (state.LabelValue):
// itself, or the first 16 hex digits of its sha256 when it is longer
// than a label value may be.
func labelValue(name string) string {
	if len(name) > 63 {
		return object.ShortHash(name)
	}
	return name
}

// Namespace creates a namespace if it is missing.
func (cs *Clients) Namespace(ctx context.Context, name string) error {
	_, err := cs.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// ModuleImage is the module image of every test object: CAPTF's schema
// requires spec.source.image, and nothing in the test-bed pulls it.
const ModuleImage = "registry.example/captf-module:v0.1.0"

// Object creates a CAPTF object (and its namespace) with the smallest spec
// CAPTF's schema accepts: spec.source.image.
func (cs *Clients) Object(ctx context.Context, r object.Ref) error {
	return cs.ObjectWithSpec(ctx, r, nil)
}

// ObjectWithSpec creates a CAPTF object (and its namespace) with
// spec.source.image and the given spec fields on top (for example
// "deletionPolicy": "Retain"); a "source" in spec replaces the default.
func (cs *Clients) ObjectWithSpec(ctx context.Context, r object.Ref, spec map[string]any) error {
	if err := cs.Namespace(ctx, r.Namespace); err != nil {
		return err
	}
	s := map[string]any{"source": map[string]any{"image": ModuleImage}}
	for k, v := range spec {
		s[k] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": object.Group + "/" + object.Version, "kind": r.Kind.Name,
		"metadata": map[string]any{"name": r.Name, "namespace": r.Namespace},
		"spec":     s,
	}}
	// Cluster API sets an owner on every infrastructure object, of the
	// kind CAPTF looks for (OwnerRef): without one CAPTF waits for it and
	// starts no Job. No garbage collector runs in the test-bed, so the
	// object stays although that owner does not exist; CAPTF would find
	// it gone (OwnerGone), and a TerraformCluster's or a pool's inputs,
	// which it builds on every pass, would stop at DependenciesReady
	// OwnerNotFound. An object CAPTF is to start a Job for is made with
	// Seed and a World, which makes the owner.
	u.SetOwnerReferences([]metav1.OwnerReference{OwnerRef(r.Kind)})
	_, err := cs.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).Create(ctx, u, metav1.CreateOptions{})
	return err
}

// OwnerRef is the owner reference Cluster API sets on an object of kind k:
// a Cluster for a TerraformCluster, a Machine for a TerraformMachine, a
// MachinePool for a TerraformMachinePool (the kinds CAPTF's owner lookup
// follows).
func OwnerRef(k object.Kind) metav1.OwnerReference {
	kind := map[string]string{"TerraformCluster": "Cluster", "TerraformMachine": "Machine", "TerraformMachinePool": "MachinePool"}[k.Name]
	return metav1.OwnerReference{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: kind, Name: "cluster", UID: "00000000-0000-0000-0000-00000000c1a5"}
}

// PatchObject merge-patches a CAPTF object (not its status), for example
// {"metadata": {"annotations": {"cluster.x-k8s.io/paused": ""}}} or
// {"spec": {"deletionPolicy": "Retain"}}. A null value removes a field.
func (cs *Clients) PatchObject(ctx context.Context, r object.Ref, patch map[string]any) error {
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	_, err = cs.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).Patch(ctx, r.Name, types.MergePatchType, b, metav1.PatchOptions{})
	return err
}

// Annotate sets annotations on a CAPTF object.
func (cs *Clients) Annotate(ctx context.Context, r object.Ref, annotations map[string]string) error {
	a := map[string]any{}
	for k, v := range annotations {
		a[k] = v
	}
	return cs.PatchObject(ctx, r, map[string]any{"metadata": map[string]any{"annotations": a}})
}

// SetStatus merge-patches the object's status through the status
// subresource, as CAPTF's controller writes it. The schema applies: status
// must not be empty, activeJob needs name, operation and attempt (see
// ActiveJob), each condition needs type, status, reason, message and
// lastTransitionTime (see Condition). Lists such as conditions are replaced
// whole.
func (cs *Clients) SetStatus(ctx context.Context, r object.Ref, status map[string]any) error {
	b, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	_, err = cs.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).Patch(ctx, r.Name, types.MergePatchType, b, metav1.PatchOptions{}, "status")
	return err
}

// ActiveJob is a status.activeJob value as CAPTF writes it; a zero start
// leaves startTime out.
func ActiveJob(name, operation string, attempt int, start time.Time) map[string]any {
	j := map[string]any{"name": name, "operation": operation, "attempt": int64(attempt)}
	if !start.IsZero() {
		j["startTime"] = start.UTC().Format(time.RFC3339)
	}
	return j
}

// Condition is one status.conditions item in metav1.Condition's shape.
func Condition(typ, status, reason, message string, at time.Time) map[string]any {
	return map[string]any{
		"type": typ, "status": status, "reason": reason, "message": message,
		"lastTransitionTime": at.UTC().Format(time.RFC3339),
	}
}

// DeleteHeld deletes a CAPTF object that a finalizer keeps: it stays, with
// a deletionTimestamp, as while CAPTF's controller runs its deletion (for
// example under spec.deletionPolicy Retain).
func (cs *Clients) DeleteHeld(ctx context.Context, r object.Ref) error {
	if err := cs.PatchObject(ctx, r, map[string]any{"metadata": map[string]any{"finalizers": []string{"captf.io/test-hold"}}}); err != nil {
		return err
	}
	return cs.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{})
}

// RunnerPod creates a pod of the object's runner Job, with CAPTF's labels,
// and sets its phase through the status subresource (no kubelet does).
func (cs *Clients) RunnerPod(ctx context.Context, r object.Ref, name string, phase corev1.PodPhase) (*corev1.Pod, error) {
	labels := OwnerLabels(r)
	return cs.Pod(ctx, r.Namespace, name, labels, phase)
}

// Pod creates any pod and sets its phase.
func (cs *Clients) Pod(ctx context.Context, ns, name string, labels map[string]string, phase corev1.PodPhase) (*corev1.Pod, error) {
	if err := cs.Namespace(ctx, ns); err != nil {
		return nil, err
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "runner", Image: "example.invalid/runner:test"}},
		},
	}
	p, err := cs.Kube.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil || phase == "" || phase == corev1.PodPending {
		return p, err
	}
	return cs.SetPhase(ctx, p, phase)
}

// SetPhase sets a pod's phase.
func (cs *Clients) SetPhase(ctx context.Context, p *corev1.Pod, phase corev1.PodPhase) (*corev1.Pod, error) {
	p = p.DeepCopy()
	p.Status.Phase = phase
	return cs.Kube.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
}

// TerminatingPod creates a running pod that a finalizer keeps terminating
// after its deletion, as a pod in its grace period is.
func (cs *Clients) TerminatingPod(ctx context.Context, r object.Ref, name string) error {
	p, err := cs.RunnerPod(ctx, r, name, corev1.PodRunning)
	if err != nil {
		return err
	}
	p.Finalizers = []string{"captf.io/test-hold"}
	if _, err := cs.Kube.CoreV1().Pods(r.Namespace).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return cs.Kube.CoreV1().Pods(r.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
}

// LockLease creates a lock Lease as the kubernetes backend does: its labels,
// then the holder and the lock-info annotation. holder nil leaves it
// unlocked; info nil leaves no annotation.
func (cs *Clients) LockLease(ctx context.Context, ns, suffix string, extraLabels map[string]string, holder, info *string) (*coordinationv1.Lease, error) {
	if err := cs.Namespace(ctx, ns); err != nil {
		return nil, err
	}
	labels := map[string]string{
		"tfstate": "true", "tfstateSecretSuffix": suffix, "tfstateWorkspace": "default",
		"app.kubernetes.io/managed-by": "terraform",
	}
	for k, v := range extraLabels {
		labels[k] = v
	}
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: object.LockLeaseName("default", suffix), Namespace: ns, Labels: labels}}
	l.Spec.HolderIdentity = holder
	if info != nil {
		l.Annotations = map[string]string{"app.terraform.io/lock-info": *info}
	}
	return cs.Kube.CoordinationV1().Leases(ns).Create(ctx, l, metav1.CreateOptions{})
}

// LockInfo is a lock-info annotation as Terraform writes it: compact JSON
// of these fields, in this order.
func LockInfo(id, who string, created time.Time) string {
	b, err := json.Marshal(struct {
		ID, Operation, Info, Who, Version string
		Created                           time.Time
		Path                              string
	}{id, "OperationTypeApply", "", who, "1.11.4", created.UTC(), ""})
	if err != nil {
		panic(err) // strings and a time always marshal
	}
	return string(b)
}

// RunnerJob creates a runner Job of the object, owned by it as CAPTF's are;
// active unless finished.
func (cs *Clients) RunnerJob(ctx context.Context, r object.Ref, name string, finished bool) error {
	u, err := cs.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	ctrl := true
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: r.Namespace, Labels: OwnerLabels(r),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: object.Group + "/" + object.Version, Kind: r.Kind.Name, Name: r.Name, UID: u.GetUID(), Controller: &ctrl,
			}},
		},
		Spec: batchv1.JobSpec{
			Suspend: &ctrl, // no controller runs it; suspended keeps it honest
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "runner", Image: "example.invalid/runner:test"}},
			}},
		},
	}
	j, err = cs.Kube.BatchV1().Jobs(r.Namespace).Create(ctx, j, metav1.CreateOptions{})
	if err != nil || !finished {
		return err
	}
	now := metav1.Now()
	j.Status.StartTime, j.Status.CompletionTime = &now, &now
	j.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	j.Status.Succeeded = 1
	_, err = cs.Kube.BatchV1().Jobs(r.Namespace).UpdateStatus(ctx, j, metav1.UpdateOptions{})
	return err
}
