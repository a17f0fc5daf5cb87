// Package jobgate says whether CAPTF will start a runner Job for an object.
// A stale lock is cleared only by the force-unlock that CAPTF binds to a
// Job it creates, so wherever no Job starts the lock stays. The gates are
// read from the object as CAPTF's reconcile leaves them (CAPTF v0.1.x,
// internal/controllers/shared/reconcile.go): annotations, spec and the
// status conditions it sets when it holds a Job back.
package jobgate

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// State is what the gates allow.
type State int

const (
	// Open: no gate is set; the object's next Job carries the force-unlock.
	Open State = iota
	// Closed: a gate stops every Job, so nothing force-unlocks the lock.
	Closed
	// Unsure: a gate may or may not hold Jobs back, or it could not be read.
	Unsure
)

// Gate is the first gate found, in the order CAPTF's reconcile meets them.
type Gate struct {
	State State
	// Reason names the gate and the evidence; "" when Open.
	Reason string
}

// Annotations CAPTF and Cluster API read.
const (
	PausedAnnotation            = "cluster.x-k8s.io/paused"
	ExternallyManagedAnnotation = "cluster.x-k8s.io/managed-by"
)

// heldState are StateReadable=False reasons under which CAPTF starts no Job
// but a restore.
var heldState = map[string]bool{
	"StateEncrypted": true, "StateCorrupt": true, "StateInconsistent": true,
	"StateLost": true, "ApplyOutcomeUnknown": true, "RetainedStateFound": true,
}

// Of reads the gates of one CAPTF object (kind is its exact Kind).
func Of(kind string, u *unstructured.Unstructured) Gate {
	if _, ok := u.GetAnnotations()[ExternallyManagedAnnotation]; ok {
		return closed("the object has the %s annotation: CAPTF leaves it to another controller and starts no Job", ExternallyManagedAnnotation)
	}
	if _, ok := u.GetAnnotations()[PausedAnnotation]; ok {
		return closed("the object is paused (annotation %s): CAPTF starts no Job while it is", PausedAnnotation)
	}
	conds := conditions(u)
	if c, ok := conds["Paused"]; ok && c.status == "True" {
		return closed("the object is paused (condition Paused: %s): CAPTF starts no Job while it is", c.says())
	}
	if u.GetDeletionTimestamp() != nil {
		if g, done := deleting(kind, u, conds); done {
			return g
		}
	}
	if c, ok := conds["StateReadable"]; ok && c.status == "False" && heldState[c.reason] {
		return closed("CAPTF holds the state (StateReadable %s): no Job but a restore starts", c.says())
	}
	for _, t := range []string{"IdentityAllowed", "CredentialsMirrored", "RunnerRBACReady"} {
		if c, ok := conds[t]; ok && c.status != "True" {
			return closed("the runner's credentials are not ready (%s %s): CAPTF starts no Job until they are", t, c.says())
		}
	}
	if c, ok := conds["DependenciesReady"]; ok && c.status != "True" {
		return unsure("a dependency gate is set (DependenciesReady %s): CAPTF starts no Job for a mutable or unprovisioned object until it clears", c.says())
	}
	if c, ok := conds["ApplyJobSucceeded"]; ok {
		switch c.reason {
		case "JobPolicyInvalid":
			return closed("the Job policy is invalid (ApplyJobSucceeded %s): CAPTF starts no Job until it is fixed", c.says())
		case "PlanAwaitingApproval", "DestructivePlanBlocked":
			return unsure("an apply waits for approval (ApplyJobSucceeded %s): while it waits for new inputs to be approved, refresh and drift Jobs wait too", c.says())
		}
	}
	return Gate{State: Open}
}

// deleting reads the gates of an object being deleted.
func deleting(kind string, u *unstructured.Unstructured, conds map[string]condition) (Gate, bool) {
	if c, ok := conds["DeletionBlocked"]; ok && c.status == "True" {
		return closed("its deletion is blocked (DeletionBlocked %s): no destroy Job starts", c.says()), true
	}
	if c, ok := conds["Deleting"]; ok && c.reason == "DeletionPolicyUnresolved" {
		return closed("its deletion waits (Deleting %s): neither a destroy nor a Retain runs", c.says()), true
	}
	policy, _, _ := unstructured.NestedString(u.Object, "spec", "deletionPolicy")
	switch {
	case policy == "Retain":
		return closed("the object is being deleted under deletionPolicy Retain: no Job starts, so no runner force-unlocks the lock (CAPTF's Retain deletes the lock Lease itself when it releases the object)"), true
	case policy == "" && kind != "TerraformCluster":
		return unsure("the object is being deleted and inherits its deletionPolicy from its TerraformCluster: under Retain no Job starts"), true
	}
	return Gate{}, false
}

func closed(format string, a ...any) Gate {
	return Gate{State: Closed, Reason: fmt.Sprintf(format, a...)}
}

func unsure(format string, a ...any) Gate {
	return Gate{State: Unsure, Reason: fmt.Sprintf(format, a...)}
}

type condition struct{ status, reason, message string }

// says is the condition as "False/Reason".
func (c condition) says() string {
	if c.reason == "" {
		return c.status
	}
	return c.status + "/" + c.reason
}

// conditions reads status.conditions by type.
func conditions(u *unstructured.Unstructured) map[string]condition {
	out := map[string]condition{}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range list {
		m, _ := raw.(map[string]any)
		str := func(k string) string { s, _ := m[k].(string); return s }
		if t := str("type"); t != "" {
			out[t] = condition{status: str("status"), reason: str("reason"), message: str("message")}
		}
	}
	return out
}
