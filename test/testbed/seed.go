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

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// Labels CAPTF puts on its runner Jobs and pods, and passes to the backend.
const (
	labelOwnerKind = "captf.infrastructure.cluster.x-k8s.io/owner-kind"
	labelOwnerName = "captf.infrastructure.cluster.x-k8s.io/owner-name"
	labelManaged   = "captf.io/managed"
)

// OwnerLabels are the labels CAPTF passes to the backend for an object.
func OwnerLabels(r object.Ref) map[string]string {
	name := r.Name
	if len(name) > 63 {
		name = object.ShortHash(name)
	}
	return map[string]string{labelOwnerKind: r.Kind.Name, labelOwnerName: name, labelManaged: "true"}
}

// Namespace creates a namespace if it is missing.
func (cs *Clients) Namespace(ctx context.Context, name string) error {
	_, err := cs.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Object creates a CAPTF object (and its namespace).
func (cs *Clients) Object(ctx context.Context, r object.Ref) error {
	if err := cs.Namespace(ctx, r.Namespace); err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": object.Group + "/" + object.Version, "kind": r.Kind.Name,
		"metadata": map[string]any{"name": r.Name, "namespace": r.Namespace},
		"spec":     map[string]any{},
	}}
	_, err := cs.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).Create(ctx, u, metav1.CreateOptions{})
	return err
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
