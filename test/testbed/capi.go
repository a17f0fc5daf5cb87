package testbed

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// ClusterGVR is Cluster API's Cluster, as the test-bed serves it.
var ClusterGVR = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "clusters"}

// ClusterNameLabel names an object's CAPI Cluster.
const ClusterNameLabel = "cluster.x-k8s.io/cluster-name"

// CAPICluster creates a Cluster API Cluster whose spec.infrastructureRef
// names a TerraformCluster (infra ""  leaves the reference out).
func (cs *Clients) CAPICluster(ctx context.Context, ns, name, infra string) error {
	if err := cs.Namespace(ctx, ns); err != nil {
		return err
	}
	spec := map[string]any{}
	if infra != "" {
		spec["infrastructureRef"] = map[string]any{"apiGroup": object.Group, "kind": "TerraformCluster", "name": infra}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
	_, err := cs.Dynamic.Resource(ClusterGVR).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
	return err
}

// Seeded is a CAPTF object as a test wants it: its spec fields (over
// spec.source.image), labels, annotations and status.
type Seeded struct {
	Spec        map[string]any
	Labels      map[string]string
	Annotations map[string]string
	// Status is set through the status subresource, as CAPTF writes it.
	Status map[string]any
	// Delete, when set, deletes the object, held by these finalizers (at
	// least the test-bed's own).
	Delete []string
	// World, when set, makes the object with what CAPTF reads around it
	// (world.go): its owner chain, credentials, state, inputs records and
	// the conditions CAPTF writes; Status then adds to those conditions.
	World *World
}

// Seed creates a CAPTF object as s describes it: created with its spec,
// labels and annotations, then its status, then deleted when asked.
func (cs *Clients) Seed(ctx context.Context, r object.Ref, s Seeded) error {
	if s.World != nil {
		return cs.seedWorld(ctx, r, s, *s.World)
	}
	if err := cs.ObjectWithSpec(ctx, r, s.Spec); err != nil {
		return err
	}
	meta := map[string]any{}
	if len(s.Labels) > 0 {
		meta["labels"] = s.Labels
	}
	if len(s.Annotations) > 0 {
		meta["annotations"] = s.Annotations
	}
	if len(meta) > 0 {
		if err := cs.PatchObject(ctx, r, map[string]any{"metadata": meta}); err != nil {
			return err
		}
	}
	if s.Status != nil {
		if err := cs.SetStatus(ctx, r, s.Status); err != nil {
			return err
		}
	}
	if s.Delete != nil {
		return cs.DeleteHeldWith(ctx, r, s.Delete...)
	}
	return nil
}

// DeleteHeldWith is DeleteHeld with more finalizers on the object (CAPTF's
// own, say) besides the test-bed's.
func (cs *Clients) DeleteHeldWith(ctx context.Context, r object.Ref, finalizers ...string) error {
	f := append([]string{"captf.io/test-hold"}, finalizers...)
	if err := cs.PatchObject(ctx, r, map[string]any{"metadata": map[string]any{"finalizers": f}}); err != nil {
		return err
	}
	return cs.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{})
}

// JobOutcome is how a test Job ended.
type JobOutcome int

// The outcomes.
const (
	JobRunning JobOutcome = iota
	JobSucceeded
	JobFailed
	// JobDeadlineExceeded is failed at activeDeadlineSeconds, with the
	// reason and message the Job controller writes.
	JobDeadlineExceeded
)

// Job creates a runner Job named name with the object's CAPTF labels and
// op label, whose controller is the object of uid (the object's own uid,
// or another: a Job of an earlier object of the same name), ended as
// outcome says; args are its runner container's ("--force-unlock=<ID>",
// as CAPTF's internal/jobs/spec.go passes them).
func (cs *Clients) Job(ctx context.Context, r object.Ref, name, op string, uid types.UID, outcome JobOutcome, args ...string) error {
	ctrl := true
	labels := OwnerLabels(r)
	labels["captf.infrastructure.cluster.x-k8s.io/op"] = op
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: r.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: object.Group + "/" + object.Version, Kind: r.Kind.Name, Name: r.Name, UID: uid, Controller: &ctrl,
			}},
		},
		Spec: batchv1.JobSpec{
			Suspend: &ctrl,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "source", Image: "example.invalid/runner:test", Args: args}},
			}},
		},
	}
	j, err := cs.Kube.BatchV1().Jobs(r.Namespace).Create(ctx, j, metav1.CreateOptions{})
	if err != nil || outcome == JobRunning {
		return err
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	j.Status.StartTime = &now
	switch outcome {
	case JobSucceeded:
		j.Status.CompletionTime = &now
		j.Status.Succeeded = 1
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
	case JobDeadlineExceeded:
		const reason, msg = "DeadlineExceeded", "Job was active longer than specified deadline"
		j.Status.Failed = 1
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastTransitionTime: now},
		}
	default:
		j.Status.Failed = 1
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
	}
	_, err = cs.Kube.BatchV1().Jobs(r.Namespace).UpdateStatus(ctx, j, metav1.UpdateOptions{})
	return err
}

// UID is a CAPTF object's uid.
func (cs *Clients) UID(ctx context.Context, r object.Ref) (types.UID, error) {
	u, err := cs.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return u.GetUID(), nil
}
