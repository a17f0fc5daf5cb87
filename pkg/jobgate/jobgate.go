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
	// Quiet is true when CAPTF sets no StateReadable condition as things
	// stand: it stops before reading the state (externally managed, no
	// owner, an owner gate, a blocked deletion) or the object is paused.
	// Any StateLocked or StateRead it shows is then from an earlier pass.
	Quiet bool
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
		return quiet(closed("the object has the %s annotation: CAPTF leaves it to another controller and starts no Job", ExternallyManagedAnnotation))
	}
	deletingNow := u.GetDeletionTimestamp() != nil
	conds := conditions(u)
	if len(u.GetOwnerReferences()) == 0 && !deletingNow {
		return quiet(closed("the object has no owner reference yet: CAPTF waits for it and starts no Job"))
	}
	if c, ok := conds["DependenciesReady"]; ok && c.status != "True" && ownerGate[c.reason] && !deletingNow {
		return quiet(closed("CAPTF stops before the lock check (DependenciesReady %s): no Job starts", c.says()))
	}
	if _, ok := u.GetAnnotations()[PausedAnnotation]; ok {
		return quiet(closed("the object is paused (annotation %s): CAPTF starts no Job while it is", PausedAnnotation))
	}
	if c, ok := conds["Paused"]; ok && c.status == "True" {
		return quiet(closed("the object is paused (condition Paused: %s): CAPTF starts no Job while it is", c.says()))
	}
	if deletingNow {
		if g, done := deleting(kind, u, conds); done {
			return g
		}
	}
	if c, ok := conds["StateReadable"]; ok && c.status == "False" && heldState[c.reason] {
		restore := u.GetAnnotations()[RestoreAnnotation]
		last, _, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "lastRestoredSerial")
		if restore != "" && restore != fmt.Sprint(last) {
			return unsure("CAPTF holds the state (StateReadable %s); only the restore Job asked for (%s=%s) starts, and it carries the force-unlock", c.says(), RestoreAnnotation, restore)
		}
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
		case "JobPolicyInvalid", "InputsTooLarge", "IdentityNotAllowed":
			return closed("CAPTF holds its Jobs back (ApplyJobSucceeded %s) until that is fixed", c.says())
		case "DestroyFailed":
			return unsure("the last destroy failed (ApplyJobSucceeded %s); when its inputs Secrets are missing no destroy Job starts", c.says())
		case "PlanAwaitingApproval", "DestructivePlanBlocked":
			return unsure("an apply waits for approval (ApplyJobSucceeded %s): while it waits for new inputs to be approved, refresh and drift Jobs wait too", c.says())
		}
	}
	if c, ok := conds["DriftJobSucceeded"]; ok && c.reason == "DurableInputsMissing" {
		return unsure("refresh and drift Jobs wait for their inputs (DriftJobSucceeded %s)", c.says())
	}
	if n, ok, _ := unstructured.NestedInt64(u.Object, "spec", "drift", "intervalSeconds"); ok && n == 0 {
		return unsure("spec.drift.intervalSeconds is 0, so no drift or refresh Job is scheduled: a Job starts only when its inputs change or an apply is retried")
	}
	return Gate{State: Open}
}

// ownerGate are DependenciesReady reasons with which CAPTF's reconcile
// stops before it checks the lock, for an object not being deleted.
var ownerGate = map[string]bool{
	"WaitingForOwner": true, "ClusterNotTerraform": true, "OwnerMismatch": true,
	"WaitingForOwnerMachine": true, "WaitingForOwnerMachinePool": true,
}

// RestoreAnnotation asks CAPTF for a restore Job of a state backup.
const RestoreAnnotation = "captf.io/restore-state"

func quiet(g Gate) Gate {
	g.Quiet = true
	return g
}

// deleting reads the gates of an object being deleted.
func deleting(kind string, u *unstructured.Unstructured, conds map[string]condition) (Gate, bool) {
	if c, ok := conds["DeletionBlocked"]; ok && c.status == "True" {
		return quiet(closed("its deletion is blocked (DeletionBlocked %s): no destroy Job starts", c.says())), true
	}
	if c, ok := conds["Deleting"]; ok && c.reason == "DeletionPolicyUnresolved" {
		return quiet(closed("its deletion waits (Deleting %s): neither a destroy nor a Retain runs", c.says())), true
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
