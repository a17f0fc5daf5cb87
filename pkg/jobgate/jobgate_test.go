package jobgate

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(edit func(u *unstructured.Unstructured)) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "TerraformMachine",
		"metadata": map[string]any{"name": "web", "namespace": "ns"},
		"spec":     map[string]any{"source": map[string]any{"image": "i"}},
	}}
	u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "Machine", Name: "m", UID: "1"}})
	if edit != nil {
		edit(u)
	}
	return u
}

func cond(typ, status, reason string) func(u *unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		u.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": typ, "status": status, "reason": reason, "message": "m"}}}
	}
}

// Each gate of CAPTF v0.1.x's reconcile, read from the object.
func TestOf(t *testing.T) {
	now := metav1.Now()
	for _, c := range []struct {
		name  string
		edit  func(u *unstructured.Unstructured)
		state State
		quiet bool
		says  string
	}{
		{"nothing in the way", nil, Open, false, ""},
		{"externally managed", func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{ExternallyManagedAnnotation: "x"})
		}, Closed, true, "another controller"},
		{"no owner", func(u *unstructured.Unstructured) { u.SetOwnerReferences(nil) }, Closed, true, "no owner reference"},
		{"owner gate", cond("DependenciesReady", "Unknown", "WaitingForOwner"), Closed, true, "before the lock check"},
		{"other dependency", cond("DependenciesReady", "False", "VariablesInvalid"), Unsure, false, "dependency gate"},
		{"paused annotation", func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{PausedAnnotation: ""}) }, Closed, true, "paused"},
		{"paused cluster", cond("Paused", "True", "Paused"), Closed, true, "condition Paused: True/Paused"},
		{"not paused", cond("Paused", "False", "NotPaused"), Open, false, ""},
		{"retain", func(u *unstructured.Unstructured) {
			u.SetDeletionTimestamp(&now)
			_ = unstructured.SetNestedField(u.Object, "Retain", "spec", "deletionPolicy")
		}, Closed, false, "deletionPolicy Retain"},
		{"inherited policy", func(u *unstructured.Unstructured) { u.SetDeletionTimestamp(&now) }, Unsure, false, "inherits its deletionPolicy"},
		{"destroy", func(u *unstructured.Unstructured) {
			u.SetDeletionTimestamp(&now)
			_ = unstructured.SetNestedField(u.Object, "Destroy", "spec", "deletionPolicy")
		}, Open, false, ""},
		{"deletion blocked", func(u *unstructured.Unstructured) {
			u.SetDeletionTimestamp(&now)
			cond("DeletionBlocked", "True", "DependentsExist")(u)
		}, Closed, true, "blocked"},
		{"state held", cond("StateReadable", "False", "StateLost"), Closed, false, "holds the state"},
		{"state held, restore asked", func(u *unstructured.Unstructured) {
			cond("StateReadable", "False", "StateLost")(u)
			u.SetAnnotations(map[string]string{RestoreAnnotation: "7"})
		}, Unsure, false, "restore Job"},
		{"state locked is no gate", cond("StateReadable", "False", "StateLocked"), Open, false, ""},
		{"credentials", cond("RunnerRBACReady", "False", "RBACFailed"), Closed, false, "credentials"},
		{"job policy", cond("ApplyJobSucceeded", "False", "JobPolicyInvalid"), Closed, false, "JobPolicyInvalid"},
		{"approval", cond("ApplyJobSucceeded", "Unknown", "PlanAwaitingApproval"), Unsure, false, "approval"},
		{"drift off", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(0), "spec", "drift", "intervalSeconds")
		}, Unsure, false, "intervalSeconds is 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := Of("TerraformMachine", obj(c.edit))
			if g.State != c.state || g.Quiet != c.quiet || !strings.Contains(g.Reason, c.says) {
				t.Errorf("%+v, want state %d quiet %v saying %q", g, c.state, c.quiet, c.says)
			}
		})
	}
}
