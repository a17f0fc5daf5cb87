package jobgate

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// owners are the owner kinds CAPI sets on each kind.
var owners = map[string]string{"TerraformCluster": "Cluster", "TerraformMachine": "Machine", "TerraformMachinePool": "MachinePool"}

// objOf is a CAPTF object of kind, owned as CAPI owns it, with edits.
func objOf(kind string, edits ...func(u *unstructured.Unstructured)) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": kind,
		"metadata": map[string]any{"name": "web", "namespace": "ns"},
		"spec":     map[string]any{"source": map[string]any{"image": "i"}},
	}}
	u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: owners[kind], Name: "m", UID: "1"}})
	for _, e := range edits {
		e(u)
	}
	return u
}

func obj(edits ...func(u *unstructured.Unstructured)) *unstructured.Unstructured {
	return objOf("TerraformMachine", edits...)
}

// cond adds a condition to the object's status.
func cond(typ, status, reason string) func(u *unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		list = append(list, map[string]any{"type": typ, "status": status, "reason": reason, "message": "m"})
		_ = unstructured.SetNestedSlice(u.Object, list, "status", "conditions")
	}
}

func set(v any, path ...string) func(u *unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, v, path...) }
}

func annotate(k, v string) func(u *unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[k] = v
		u.SetAnnotations(a)
	}
}

var now = metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))

func deleting(u *unstructured.Unstructured) { u.SetDeletionTimestamp(&now) }
func provisioned(u *unstructured.Unstructured) {
	_ = unstructured.SetNestedField(u.Object, true, "status", "initialization", "provisioned")
}

// tc is a TerraformCluster read for inheritance.
func tc(edits ...func(u *unstructured.Unstructured)) Cluster {
	return Cluster{Read: true, Object: objOf("TerraformCluster", edits...), Why: "found"}
}

// env is a read environment: a TerraformCluster without defaults, Jobs
// read and none active nor left unbookkept, the state, the inputs
// records and state backups present, the namespace not being deleted.
func env(edits ...func(*Env)) Env {
	e := Env{Cluster: tc(), JobsRead: true, State: Present, UnbookkeptApply: Absent, Records: Records{Read: true, Inputs: true, Backups: true}, NamespaceDeleting: Absent}
	for _, f := range edits {
		f(&e)
	}
	return e
}

func withCluster(c Cluster) func(*Env) { return func(e *Env) { e.Cluster = c } }
func withRecords(r Records) func(*Env) { return func(e *Env) { e.Records = r } }
func withNamespace(p Presence) func(*Env) {
	return func(e *Env) { e.NamespaceDeleting, e.NamespaceWhy = p, "Forbidden" }
}
func withUnbookkept(p Presence) func(*Env) { return func(e *Env) { e.UnbookkeptApply = p } }
func noOwner(u *unstructured.Unstructured) { u.SetOwnerReferences(nil) }

// noRecords is an object without inputs records or state backups.
var noRecords = Records{Read: true}

func withState(p Presence) func(*Env) {
	return func(e *Env) { e.State, e.StateWhy = p, "Forbidden" }
}

// Each gate of CAPTF v0.1.x's reconcile, in its order.
func TestOf(t *testing.T) {
	unread := Cluster{Why: "Cluster c could not be read: Forbidden"}
	for _, c := range []struct {
		name  string
		kind  string
		u     *unstructured.Unstructured
		env   Env
		state State
		quiet bool
		says  string
		next  string
		// deletes is the deletion path, "" for none; certain is whether it
		// is certain.
		deletes string
		certain bool
	}{
		{name: "nothing in the way", u: obj(), env: env(), state: Open, next: "a drift Job, every --drift-default-interval, 30 min by default"},
		{name: "externally managed", u: obj(annotate(ExternallyManagedAnnotation, "x")), env: env(), state: Closed, quiet: true, says: "another controller"},
		{name: "no owner", u: obj(func(u *unstructured.Unstructured) { u.SetOwnerReferences(nil) }), env: env(), state: Closed, quiet: true, says: "no Machine owner reference: CAPTF waits for one (DependenciesReady WaitingForOwner)"},
		{name: "an owner of another kind", u: obj(func(u *unstructured.Unstructured) {
			u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster", Name: "c"}})
		}), env: env(), state: Closed, quiet: true, says: "WaitingForOwnerMachine"},
		{name: "a cluster's owner must be a Cluster of CAPI's group", kind: "TerraformCluster", u: objOf("TerraformCluster", func(u *unstructured.Unstructured) {
			u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Cluster", Name: "c"}})
		}), env: env(), state: Closed, quiet: true, says: "no Cluster owner reference"},
		{name: "owner mismatch", u: obj(cond("DependenciesReady", "False", "OwnerMismatch")), env: env(), state: Closed, quiet: true, says: "before the lock check"},
		{name: "owner mismatch on a provisioned machine may be left over", u: obj(provisioned, cond("DependenciesReady", "False", "OwnerMismatch")), env: env(), state: Unsure, says: "left over"},
		{name: "cluster not terraform", u: obj(), env: env(withCluster(Cluster{Read: true, NotTerraform: "Cluster c uses infrastructure x X, not a TerraformCluster"})), state: Closed, quiet: true, says: "ClusterNotTerraform"},
		// WaitingForOwner with the owner present is the inputs gate
		// (gates.go CheckGates), not the preamble's: not quiet.
		{name: "WaitingForOwner with an owner: the inputs gate", u: obj(cond("DependenciesReady", "Unknown", "WaitingForOwner")), env: env(), state: Unsure, says: "dependency gate"},
		{name: "dependency gate on a provisioned machine is left over", u: obj(provisioned, cond("DependenciesReady", "False", "WaitingForClusterExports")), env: env(), state: Open},
		{name: "owner-gate reason left over with the owner present", u: obj(cond("DependenciesReady", "False", "WaitingForOwnerMachine")), env: env(), state: Open},
		{name: "other dependency", u: obj(cond("DependenciesReady", "False", "VariablesInvalid")), env: env(), state: Unsure, says: "dependency gate"},
		{name: "paused annotation", u: obj(annotate(PausedAnnotation, "")), env: env(), state: Closed, quiet: true, says: "paused"},
		{name: "paused cluster", u: obj(cond("Paused", "True", "Paused")), env: env(), state: Closed, quiet: true, says: "condition Paused: True/Paused"},
		{name: "paused, deleting", u: obj(deleting, annotate(PausedAnnotation, ""), set("Retain", "spec", "deletionPolicy")), env: env(), state: Closed, quiet: true, says: "no destroy, no Retain and no cleanup"},
		{name: "not paused", u: obj(cond("Paused", "False", "NotPaused")), env: env(), state: Open},
		{name: "state held", u: obj(cond("StateReadable", "False", "StateLost")), env: env(), state: Closed, says: "holds the state"},
		{name: "state held, restore asked", u: obj(cond("StateReadable", "False", "StateLost"), annotate(RestoreAnnotation, "7")), env: env(), state: Unsure, says: "restore Job", next: "the restore Job"},
		{name: "state held, restore already done", u: obj(cond("StateReadable", "False", "StateLost"), annotate(RestoreAnnotation, " 7 "), set(int64(7), "status", "lastRestoredSerial")), env: env(), state: Closed},
		// retain.go heldOnRetained returns before restoreTarget.
		{name: "retained state, restore asked", u: obj(cond("StateReadable", "False", "RetainedStateFound"), annotate(RestoreAnnotation, "7")), env: env(), state: Closed, says: "not even a restore"},
		{name: "retained state, adopted", u: obj(cond("StateReadable", "False", "RetainedStateFound"), set(true, "spec", "adoptRetainedState")), env: env(), state: Open},
		{name: "state locked is no gate", u: obj(cond("StateReadable", "False", "StateLocked")), env: env(), state: Open},
		{name: "credentials", u: obj(cond("RunnerRBACReady", "False", "RBACFailed")), env: env(), state: Closed, says: "credentials"},
		{name: "approval", u: obj(cond("ApplyJobSucceeded", "Unknown", "PlanAwaitingApproval")), env: env(), state: Unsure, says: "approval"},
		// reader.go orderChunks: the names CAPTF's next read refuses hold
		// the state, whatever StateReadable says now.
		{name: "state Secrets' names refused", u: obj(cond("StateReadable", "True", "StateRead")), env: env(func(e *Env) {
			e.ChunkReason, e.ChunkWhy = "StateInconsistent", "its -part-N chunks have no base Secret x"
		}), state: Closed, says: "CAPTF's next read of its state fails on the state Secrets' names (its -part-N chunks have no base Secret x), and it writes StateReadable False/StateInconsistent, so it holds the state: no Job but a restore starts"},
		{name: "state Secrets' names refused, restore asked", u: obj(annotate(RestoreAnnotation, "2")), env: env(func(e *Env) { e.ChunkReason, e.ChunkWhy = "StateCorrupt", "33 state Secrets" }), state: Unsure, next: "the restore Job"},
		{name: "state Secrets' names refused while deleting", u: obj(deleting, set("Destroy", "spec", "deletionPolicy")), env: env(func(e *Env) { e.ChunkReason, e.ChunkWhy = "StateCorrupt", "33 state Secrets" }), state: Closed, says: "so it holds the deletion on the state"},
		// decide.go: a restore asked for is the next op under an open gate.
		{name: "restore asked, gates open", u: obj(annotate(RestoreAnnotation, "4")), env: env(), state: Open, next: "the restore Job asked for (captf.io/restore-state=4), if that backup exists; else a drift Job"},
		{name: "restore asked past a closed gate", u: obj(set(int64(3600), "spec", "jobs", "lockTimeoutSeconds"), annotate(RestoreAnnotation, "4")), env: env(), state: Unsure, says: "its Job starts first", next: "the restore Job"},

		// The Job policy, merged as CAPTF merges it (case 6).
		{name: "job policy invalid now, no condition yet", u: obj(set(int64(3600), "spec", "jobs", "lockTimeoutSeconds")), env: env(), state: Closed, says: "lockTimeoutSeconds 3600 (spec.jobs.lockTimeoutSeconds) is not below activeDeadlineSeconds 3600 (the built-in default)"},
		{name: "job policy invalid through inheritance", u: obj(), env: env(withCluster(tc(set(int64(200), "spec", "defaults", "jobs", "activeDeadlineSeconds")))), state: Closed, says: "activeDeadlineSeconds 200 (terraformcluster/web spec.defaults.jobs.activeDeadlineSeconds)"},
		{name: "job policy: the cluster's own spec.jobs below its defaults", u: obj(), env: env(withCluster(tc(set(int64(100), "spec", "jobs", "activeDeadlineSeconds"), set(int64(4000), "spec", "defaults", "jobs", "activeDeadlineSeconds")))), state: Open},
		{name: "job policy: a TerraformCluster ignores its own defaults", kind: "TerraformCluster", u: objOf("TerraformCluster", set(int64(200), "spec", "defaults", "jobs", "activeDeadlineSeconds")), env: env(), state: Open},
		{name: "left-over JobPolicyInvalid with a valid policy", u: obj(cond("ApplyJobSucceeded", "False", "JobPolicyInvalid")), env: env(), state: Open},
		{name: "job policy unknown", u: obj(), env: env(withCluster(unread)), state: Unsure, says: "could not be read"},

		// Drift and remediation, inherited (case 2).
		{name: "drift off", u: obj(set(int64(0), "spec", "drift", "intervalSeconds")), env: env(), state: Unsure, says: "drift is disabled (intervalSeconds 0 from spec.drift.intervalSeconds)"},
		{name: "drift off by inheritance, provisioned machine", u: obj(provisioned), env: env(withCluster(tc(set(int64(0), "spec", "defaults", "drift", "intervalSeconds")))), state: Closed,
			says: "no Job is due: drift is disabled (intervalSeconds 0 from terraformcluster/web spec.defaults.drift.intervalSeconds), remediation.annotateMachine is not set"},
		{name: "drift off by the cluster's own drift", u: obj(provisioned), env: env(withCluster(tc(set(int64(0), "spec", "drift", "intervalSeconds")))), state: Closed, says: "terraformcluster/web spec.drift.intervalSeconds"},
		{name: "own drift wins over the inherited 0", u: obj(provisioned, set(int64(600), "spec", "drift", "intervalSeconds")), env: env(withCluster(tc(set(int64(0), "spec", "defaults", "drift", "intervalSeconds")))), state: Open, next: "a drift Job, every 600 s (spec.drift.intervalSeconds)"},
		{name: "own drift 0 with annotateMachine: health refresh", u: obj(provisioned, set(int64(0), "spec", "drift", "intervalSeconds"), set(true, "spec", "remediation", "annotateMachine")), env: env(), state: Open, next: "a health-check refresh Job (every 300 s"},
		{name: "annotateMachine from the cluster's defaults", u: obj(provisioned), env: env(withCluster(tc(set(int64(0), "spec", "defaults", "drift", "intervalSeconds"), set(true, "spec", "defaults", "remediation", "annotateMachine"), set(int64(120), "spec", "defaults", "remediation", "healthCheckIntervalSeconds")))), state: Open, next: "every 120 s"},
		{name: "own annotateMachine false wins", u: obj(provisioned, set(false, "spec", "remediation", "annotateMachine")), env: env(withCluster(tc(set(int64(0), "spec", "defaults", "drift", "intervalSeconds"), set(true, "spec", "defaults", "remediation", "annotateMachine")))), state: Closed, says: "spec.remediation.annotateMachine is false"},
		{name: "drift off, refresh after the last apply still due", u: obj(provisioned, set("2026-11-30T00:00:00Z", "status", "lastRefresh")), env: env(withCluster(tc(set(int64(0), "spec", "defaults", "drift", "intervalSeconds"))), func(e *Env) {
			t := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
			e.LastApplySucceeded = &t
		}), state: Open, next: "once after a successful apply"},
		{name: "drift off, refreshed since the last apply", u: obj(provisioned, set("2026-11-30T02:00:00Z", "status", "lastRefresh")), env: env(withCluster(tc(set(int64(0), "spec", "defaults", "drift", "intervalSeconds"))), func(e *Env) {
			t := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
			e.LastApplySucceeded = &t
		}), state: Closed},
		{name: "drift off, health pending", u: obj(provisioned, cond("InfrastructureHealthy", "False", "InstancePending")), env: env(withCluster(tc(set(int64(0), "spec", "defaults", "drift", "intervalSeconds")))), state: Open, next: "pending"},
		{name: "drift inherited from an unreadable cluster", u: obj(provisioned), env: env(withCluster(unread), func(e *Env) {}), state: Unsure},
		{name: "drift off, unprovisioned machine", u: obj(), env: env(withCluster(tc(set(int64(0), "spec", "defaults", "drift", "intervalSeconds")))), state: Unsure, says: "drift is disabled"},
		{name: "a pool's drift is never off", kind: "TerraformMachinePool", u: objOf("TerraformMachinePool", provisioned), env: env(withCluster(tc(set(int64(0), "spec", "defaults", "drift", "intervalSeconds")))), state: Open, next: "a membership refresh Job (every 60 s"},
		{name: "a TerraformCluster ignores its defaults' drift", kind: "TerraformCluster", u: objOf("TerraformCluster", provisioned, set(int64(0), "spec", "defaults", "drift", "intervalSeconds")), env: env(), state: Open, next: "a drift Job, every --drift-default-interval"},

		// Deleting: CAPTF's destroy path (case 3) and its deletions of the
		// Lease (case 4).
		{name: "retain", u: obj(deleting, set("Retain", "spec", "deletionPolicy")), env: env(), state: Closed, says: "deletionPolicy Retain (spec.deletionPolicy)", deletes: PathRetain, certain: true},
		{name: "retain inherited from the cluster's defaults", u: obj(deleting), env: env(withCluster(tc(set("Retain", "spec", "defaults", "deletionPolicy")))), state: Closed, says: "terraformcluster/web spec.defaults.deletionPolicy", deletes: PathRetain, certain: true},
		{name: "retain inherited from the cluster's own", u: obj(deleting), env: env(withCluster(tc(set("Retain", "spec", "deletionPolicy")))), state: Closed, deletes: PathRetain, certain: true},
		{name: "defaults win over the cluster's own", u: obj(deleting), env: env(withCluster(tc(set("Retain", "spec", "deletionPolicy"), set("Destroy", "spec", "defaults", "deletionPolicy")))), state: Open, next: "the destroy Job"},
		{name: "policy unresolved: no TerraformCluster", u: obj(deleting), env: env(withCluster(Cluster{Read: true, Why: "it has no cluster.x-k8s.io/cluster-name label"})), state: Closed, quiet: true, says: "DeletionPolicyUnresolved"},
		{name: "policy unknown: the cluster could not be read", u: obj(deleting), env: env(withCluster(unread)), state: Unsure, says: "inherited from a TerraformCluster that could not be read", deletes: PathRetain},
		// review26f m2: the retained state is read after an unresolved
		// policy and before what a resolved one decides (reconcile.go run
		// at ade7dc79d93b624f3a23cffb2e55f6487a315ab7).
		{name: "policy unknown, a retained state", u: obj(deleting), env: env(withCluster(unread), func(e *Env) { e.RetainedFrom, e.RetainedIn = "uid-earlier", "a state Secret" }), state: Closed, says: "if it resolves, a state Secret carries captf.io/retained-from-uid=uid-earlier"},
		{name: "policy unresolved before a retained state", u: obj(deleting, cond("StateReadable", "False", "RetainedStateFound")), env: env(withCluster(Cluster{Read: true, Why: "none"})), state: Closed, quiet: true, says: "DeletionPolicyUnresolved"},
		{name: "policy unknown, the state held", u: obj(deleting, cond("StateReadable", "False", "StateLost")), env: env(withCluster(unread)), state: Unsure, says: "under Destroy CAPTF holds the deletion on the state (StateReadable False/StateLost), and no Job but a restore asked for starts", deletes: PathRetain},
		{name: "policy unknown, the state Secrets' names refused", u: obj(deleting), env: env(withCluster(unread), func(e *Env) { e.ChunkReason, e.ChunkWhy = "StateInconsistent", "chunk 1 is missing" }), state: Unsure, says: "under Destroy CAPTF's next read of its state fails on the state Secrets' names (chunk 1 is missing)", deletes: PathRetain},
		{name: "a TerraformCluster destroys by default", kind: "TerraformCluster", u: objOf("TerraformCluster", deleting, set("Retain", "spec", "defaults", "deletionPolicy")), env: env(), state: Open, next: "the destroy Job"},
		{name: "destroy past left-over gates", u: obj(deleting, set("Destroy", "spec", "deletionPolicy"), set(int64(0), "spec", "drift", "intervalSeconds"),
			cond("ApplyJobSucceeded", "False", "JobPolicyInvalid"), cond("DependenciesReady", "False", "WaitingForClusterExports"), set(int64(3600), "spec", "jobs", "lockTimeoutSeconds")), env: env(), state: Open, next: "the destroy Job"},
		{name: "destroy past a plan approval", kind: "TerraformCluster", u: objOf("TerraformCluster", deleting, cond("ApplyJobSucceeded", "Unknown", "PlanAwaitingApproval")), env: env(), state: Open},
		{name: "owner gates fall through while deleting", u: obj(deleting, set("Destroy", "spec", "deletionPolicy"), cond("DependenciesReady", "False", "OwnerMismatch")), env: env(), state: Open},
		{name: "destroy failed, records unread", u: obj(deleting, set("Destroy", "spec", "deletionPolicy"), cond("ApplyJobSucceeded", "False", "DestroyFailed")), env: env(withRecords(Records{})), state: Unsure, says: "destroy failed"},
		{name: "credentials re-checked at the destroy", u: obj(deleting, set("Destroy", "spec", "deletionPolicy"), cond("IdentityAllowed", "False", "IdentityNotFound")), env: env(), state: Unsure, says: "again when the destroy is about to start"},
		{name: "deletion blocked", kind: "TerraformCluster", u: objOf("TerraformCluster", deleting, cond("DeletionBlocked", "True", "DependentsExist")), env: env(), state: Closed, quiet: true, says: "blocked"},
		{name: "deletion policy unresolved condition", u: obj(deleting, cond("Deleting", "True", "DeletionPolicyUnresolved")), env: env(withCluster(Cluster{Read: true, Why: "none"})), state: Closed, quiet: true, says: "neither a destroy nor a Retain"},
		{name: "deletion policy unresolved condition, cluster unread", u: obj(deleting, cond("Deleting", "True", "DeletionPolicyUnresolved")), env: env(withCluster(unread)), state: Closed, quiet: true, says: "Deleting True/DeletionPolicyUnresolved"},
		// Finding 8: CAPTF writes it only without an own policy and a
		// TerraformCluster; left over, it decides nothing.
		{name: "left-over DeletionPolicyUnresolved, own Retain", u: obj(deleting, set("Retain", "spec", "deletionPolicy"), cond("Deleting", "True", "DeletionPolicyUnresolved")), env: env(), state: Closed, deletes: PathRetain, certain: true},
		{name: "left-over DeletionPolicyUnresolved, own Destroy", u: obj(deleting, set("Destroy", "spec", "deletionPolicy"), cond("Deleting", "True", "DeletionPolicyUnresolved")), env: env(), state: Open, next: "the destroy Job"},
		{name: "left-over DeletionPolicyUnresolved, the cluster found since", u: obj(deleting, cond("Deleting", "True", "DeletionPolicyUnresolved")), env: env(), state: Open, next: "the destroy Job"},
		{name: "destroy succeeded: cleanup", u: obj(deleting, set("Destroy", "spec", "deletionPolicy")), env: env(func(e *Env) { e.DestroySucceeded = true }), state: Closed, quiet: true, deletes: PathCleanupAfterDestroy, certain: true},
		{name: "no state, never provisioned, records unread: cleanup, maybe", u: obj(deleting, set("Destroy", "spec", "deletionPolicy")), env: env(withState(Absent), withRecords(Records{})), state: Closed, deletes: PathCleanupWithoutState},
		{name: "no state, provisioned: held", u: obj(deleting, provisioned, set("Destroy", "spec", "deletionPolicy")), env: env(withState(Absent)), state: Closed, says: "StateLost"},
		{name: "state unreadable", u: obj(deleting, set("Destroy", "spec", "deletionPolicy")), env: env(withState(Unread)), state: Unsure, says: "could not be read (Forbidden)", deletes: PathCleanupWithoutState},
		{name: "retain, state unreadable: Retain deletes, unless an unread Secret is retained (review26g F9)", u: obj(deleting, set("Retain", "spec", "deletionPolicy")), env: env(withState(Unread)), state: Closed, deletes: PathRetain, certain: false},
		{name: "retain, inputs and backups unread: Retain deletes, unless one is retained (review26g F9)", u: obj(deleting, set("Retain", "spec", "deletionPolicy")), env: env(withRecords(Records{Why: "Forbidden"})), state: Closed, deletes: PathRetain, certain: false},
		{name: "retained state while deleting: released, Lease untouched", u: obj(deleting, set("Retain", "spec", "deletionPolicy"), cond("StateReadable", "False", "RetainedStateFound")), env: env(), state: Closed, says: "without touching the Lease"},
		{name: "held deletion", u: obj(deleting, set("Destroy", "spec", "deletionPolicy"), cond("StateReadable", "False", "StateCorrupt")), env: env(), state: Closed, says: "holds the deletion"},
		{name: "held deletion, retain wins", u: obj(deleting, set("Retain", "spec", "deletionPolicy"), cond("StateReadable", "False", "StateCorrupt")), env: env(), state: Closed, deletes: PathRetain, certain: true},
		{name: "held deletion, restore", u: obj(deleting, set("Destroy", "spec", "deletionPolicy"), cond("StateReadable", "False", "StateCorrupt"), annotate(RestoreAnnotation, "3")), env: env(), state: Unsure, next: "the restore Job"},
		{name: "externally managed, deleting", u: obj(deleting, annotate(ExternallyManagedAnnotation, "x"), func(u *unstructured.Unstructured) {
			u.SetFinalizers([]string{"terraformmachine.infrastructure.cluster.x-k8s.io"})
		}), env: env(), state: Closed, quiet: true, deletes: PathExternallyManaged, certain: true},
		{name: "externally managed, deleting, CAPTF's finalizer gone", u: obj(deleting, annotate(ExternallyManagedAnnotation, "x")), env: env(), state: Closed, quiet: true, says: "without CAPTF's finalizer"},

		// Finding 2 and 9: the preamble's release of an ownerless
		// deletion (preamble.go ownerlessRelease), before the pause and
		// the lock check.
		{name: "deleting without an owner or state", u: obj(deleting, noOwner), env: env(withState(Absent), withRecords(noRecords)), state: Closed, quiet: true, says: "drops its finalizer in its preamble, starting no Job and leaving the Lease"},
		{name: "deleting without an owner or state, paused: released first", u: obj(deleting, noOwner, annotate(PausedAnnotation, "")), env: env(withState(Absent), withRecords(noRecords)), state: Closed, quiet: true, says: "drops its finalizer in its preamble"},
		{name: "deleting without an owner, state unreadable", u: obj(deleting, set("Retain", "spec", "deletionPolicy"), noOwner), env: env(withState(Unread), withRecords(noRecords)), state: Closed, says: "whether its state Secret exists (Forbidden) could not be read", deletes: PathRetain},
		{name: "deleting without an owner, state unreadable, backups: not released", u: obj(deleting, set("Retain", "spec", "deletionPolicy"), noOwner), env: env(withState(Unread)), state: Closed, deletes: PathRetain, certain: false},
		{name: "deleting without an owner or state, applied before, own Retain", kind: "TerraformCluster", u: objOf("TerraformCluster", deleting, noOwner, set("Retain", "spec", "deletionPolicy")),
			env: env(withState(Absent), withRecords(Records{Read: true, Applied: true, Inputs: true})), state: Closed, deletes: PathRetain, certain: true},
		{name: "deleting without an owner or state, records unread, own Retain", kind: "TerraformCluster", u: objOf("TerraformCluster", deleting, noOwner, set("Retain", "spec", "deletionPolicy")),
			env: env(withState(Absent), withRecords(Records{})), state: Closed, says: "its inputs records and state backups (not read) could not be read", deletes: PathRetain},
		{name: "deleting without an owner or state, provisioned, Destroy: held", kind: "TerraformCluster", u: objOf("TerraformCluster", deleting, noOwner, provisioned),
			env: env(withState(Absent), withRecords(Records{})), state: Closed, says: "StateLost"},
		{name: "deleting without an owner or state, an unbookkept apply: the cleanup may run", kind: "TerraformCluster", u: objOf("TerraformCluster", deleting, noOwner),
			env: env(withState(Absent), withRecords(noRecords), withUnbookkept(Present)), state: Closed, deletes: PathCleanupWithoutState},
		{name: "deleting without an owner or state, an active Job", kind: "TerraformCluster", u: objOf("TerraformCluster", deleting, noOwner, set("Retain", "spec", "deletionPolicy")),
			env: env(withState(Absent), withRecords(noRecords), func(e *Env) { e.ActiveJob = "captf-c-web-apply-a1-aaaaaa" }), state: Closed, deletes: PathRetain, certain: true},
		{name: "deleting without an owner, paused, records unread", u: obj(deleting, noOwner, annotate(PausedAnnotation, "")), env: env(withState(Absent), withRecords(Records{})), state: Closed, says: "otherwise the object is paused"},
		{name: "a machine without an owner inherits nothing", u: obj(deleting, noOwner), env: env(withState(Present), withCluster(tc(set("Retain", "spec", "defaults", "deletionPolicy")))), state: Closed, quiet: true, says: "CAPTF looks a TerraformCluster up only for an object with a Machine owner reference"},

		// Finding 3: an owner that does not reference the object back.
		{name: "deleting machine, OwnerMismatch, inherited Retain", u: obj(deleting, cond("DependenciesReady", "False", "OwnerMismatch")), env: env(withCluster(tc(set("Retain", "spec", "defaults", "deletionPolicy")))), state: Closed, says: "if that owner still does not reference it back, CAPTF looks up no TerraformCluster", deletes: PathRetain},
		{name: "deleting machine, OwnerMismatch, inherited Destroy", u: obj(deleting, cond("DependenciesReady", "False", "OwnerMismatch")), env: env(), state: Unsure, says: "DeletionPolicyUnresolved"},
		{name: "deleting machine, OwnerMismatch, no TerraformCluster", u: obj(deleting, cond("DependenciesReady", "False", "OwnerMismatch")), env: env(withCluster(Cluster{Read: true, Why: "none"})), state: Closed, quiet: true, says: "unresolved"},
		{name: "deleting pool, OwnerMismatch, own policy", kind: "TerraformMachinePool", u: objOf("TerraformMachinePool", deleting, set("Destroy", "spec", "deletionPolicy"), cond("DependenciesReady", "False", "OwnerMismatch")), env: env(), state: Open, next: "the destroy Job"},

		// Finding 1: a namespace being deleted refuses every create.
		{name: "destroy in a terminating namespace", u: obj(deleting, set("Destroy", "spec", "deletionPolicy")), env: env(withNamespace(Present)), state: Closed, says: "namespace ns is being deleted"},
		{name: "destroy, the namespace unread", u: obj(deleting, set("Destroy", "spec", "deletionPolicy")), env: env(withNamespace(Unread)), state: Unsure, says: "whether namespace ns is being deleted could not be read (Forbidden)", next: "the destroy Job"},
		{name: "destroy, CAPTF's Deleting says the namespace is terminating", u: obj(deleting, set("Destroy", "spec", "deletionPolicy"), func(u *unstructured.Unstructured) {
			cond("Deleting", "True", "Deleting")(u)
			list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			list[0].(map[string]any)["message"] = "Namespace ns is terminating, so the destroy Job cannot be created; the namespace's deletion will remove the state Secrets as well"
			_ = unstructured.SetNestedSlice(u.Object, list, "status", "conditions")
		}), env: env(withNamespace(Unread)), state: Closed, says: "namespace ns is being deleted"},
		{name: "Retain in a terminating namespace still deletes the Lease", u: obj(deleting, set("Retain", "spec", "deletionPolicy")), env: env(withNamespace(Present)), state: Closed, deletes: PathRetain, certain: true},
		{name: "restore in a terminating namespace", u: obj(deleting, set("Destroy", "spec", "deletionPolicy"), cond("StateReadable", "False", "StateCorrupt"), annotate(RestoreAnnotation, "3")), env: env(withNamespace(Present)), state: Closed, says: "cannot create the restore Job"},
		{name: "state unread in a terminating namespace", u: obj(deleting, set("Destroy", "spec", "deletionPolicy")), env: env(withNamespace(Present), withState(Unread)), state: Closed, deletes: PathCleanupWithoutState},
		{name: "live object in a terminating namespace", u: obj(), env: env(withNamespace(Present)), state: Closed, says: "namespace ns is being deleted"},
		{name: "live object, the namespace unread", u: obj(), env: env(withNamespace(Unread)), state: Open},

		// Finding 5: the destroy renders an inputs record.
		{name: "destroy of a machine without inputs records", u: obj(deleting, set("Destroy", "spec", "deletionPolicy")), env: env(withRecords(noRecords)), state: Closed, says: "Secrets captf-inputs-m-web and captf-applied-m-web are missing"},
		{name: "destroy of a machine, records unread", u: obj(deleting, set("Destroy", "spec", "deletionPolicy")), env: env(withRecords(Records{Why: "Forbidden"})), state: Unsure, says: "could not be read (Forbidden)", next: "the destroy Job"},
		{name: "destroy of a cluster without inputs records: built again", kind: "TerraformCluster", u: objOf("TerraformCluster", deleting), env: env(withRecords(noRecords)), state: Unsure, says: "builds its inputs again", next: "the destroy Job"},
		{name: "destroy failed, records present: retried", u: obj(deleting, set("Destroy", "spec", "deletionPolicy"), cond("ApplyJobSucceeded", "False", "DestroyFailed")), env: env(), state: Open, next: "retried after its backoff"},
		{name: "destroy failed, machine without records", u: obj(deleting, set("Destroy", "spec", "deletionPolicy"), cond("ApplyJobSucceeded", "False", "DestroyFailed")), env: env(withRecords(noRecords)), state: Closed, says: "cannot render its destroy"},
		{name: "provisioned machine without inputs records: no refresh or drift", u: obj(provisioned), env: env(withRecords(noRecords)), state: Closed, says: "DurableInputsMissing"},
		{name: "provisioned machine, records unread: the conditions decide", u: obj(provisioned), env: env(withRecords(Records{})), state: Open},

		// Finding 7 and the no-state path with the records read.
		{name: "no state, provisioned, restore asked", u: obj(deleting, provisioned, set("Destroy", "spec", "deletionPolicy"), annotate(RestoreAnnotation, "4")), env: env(withState(Absent), withRecords(Records{})), state: Unsure, next: "the restore Job", says: "StateLost"},
		{name: "no state, provisioned, restore asked, no backup", u: obj(deleting, provisioned, set("Destroy", "spec", "deletionPolicy"), annotate(RestoreAnnotation, "4")), env: env(withState(Absent), withRecords(noRecords)), state: Closed, says: "RestoreBackupNotFound"},
		{name: "no state, applied records: held", u: obj(deleting, set("Destroy", "spec", "deletionPolicy")), env: env(withState(Absent), withRecords(Records{Read: true, Inputs: true, Applied: true})), state: Closed, says: "its inputs records mark an apply"},
		{name: "no state, backups: held", u: obj(deleting, set("Destroy", "spec", "deletionPolicy")), env: env(withState(Absent), withRecords(Records{Read: true, Backups: true})), state: Closed, says: "state backups of it exist"},
		{name: "no state, an unconfirmed apply: held", u: obj(deleting, set("Destroy", "spec", "deletionPolicy")), env: env(withState(Absent), withRecords(Records{Read: true, Inputs: true, Interrupted: "captf-m-web-apply-a1-aaaaaa"})), state: Closed, says: "ApplyOutcomeUnknown"},
		{name: "no state, no sign of an apply: the cleanup", u: obj(deleting, set("Destroy", "spec", "deletionPolicy")), env: env(withState(Absent), withRecords(noRecords)), state: Closed, deletes: PathCleanupWithoutState, certain: true},
		{name: "no state, no sign of an apply, Jobs not worked out", u: obj(deleting, set("Destroy", "spec", "deletionPolicy")), env: env(withState(Absent), withRecords(noRecords), withUnbookkept(Unread)), state: Closed, deletes: PathCleanupWithoutState},
		{name: "no state, records unread, restore asked", u: obj(deleting, set("Destroy", "spec", "deletionPolicy"), annotate(RestoreAnnotation, "4")), env: env(withState(Absent), withRecords(Records{})), state: Unsure, next: "the restore Job", deletes: PathCleanupWithoutState},
		{name: "live, held, restore asked, no backup", u: obj(cond("StateReadable", "False", "StateLost"), annotate(RestoreAnnotation, "7")), env: env(withRecords(noRecords)), state: Closed, says: "RestoreBackupNotFound"},
		{name: "Jobs unreadable while deleting", u: obj(deleting, set("Destroy", "spec", "deletionPolicy")), env: env(func(e *Env) { e.JobsRead, e.JobsWhy = false, "forbidden" }), state: Unsure, deletes: PathCleanupAfterDestroy},
	} {
		t.Run(c.name, func(t *testing.T) {
			kind := c.kind
			if kind == "" {
				kind = "TerraformMachine"
			}
			g := Of(kind, c.u, c.env)
			if g.State != c.state || g.Quiet != c.quiet || !strings.Contains(g.Reason, c.says) || !strings.Contains(g.Next, c.next) {
				t.Errorf("%+v, want state %d quiet %v saying %q, next %q", g, c.state, c.quiet, c.says, c.next)
			}
			// Every Job named carries its kind, which the rules read
			// instead of Next's words (review26d M2).
			if want := opNamed(c.next); g.Next != "" && (g.NextOp == "" || (want != "" && g.NextOp != want)) {
				t.Errorf("Next %q has op %q, want %q", g.Next, g.NextOp, want)
			}
			switch d := g.Deletes; {
			case c.deletes == "" && d != nil:
				t.Errorf("deletes the Lease: %+v", *d)
			case c.deletes != "" && (d == nil || d.Path != c.deletes || d.Certain != c.certain):
				t.Errorf("deletion %+v, want %s (certain %v)", d, c.deletes, c.certain)
			}
			if g.State == Closed && c.deletes == "" && strings.Contains(g.Reason, "leaving the Lease") && !g.Releases {
				t.Errorf("a release that leaves the Lease is not marked Releases: %+v", g)
			}
			if g.State == Open && g.Reason != "" {
				t.Errorf("an open gate with a reason: %q", g.Reason)
			}
		})
	}
}

// A deletion of the Lease waits for the object's active Job, and the
// externally-managed release runs before the lock check.
func TestDeletionTiming(t *testing.T) {
	retain := obj(deleting, set("Retain", "spec", "deletionPolicy"))
	g := Of("TerraformMachine", retain, env(func(e *Env) { e.ActiveJob = "captf-m-web-apply-a2-aaaaaa" }))
	if g.Deletes == nil || !strings.HasPrefix(g.Deletes.When, "once Job captf-m-web-apply-a2-aaaaaa finishes") || !g.Deletes.AfterLockCheck {
		t.Errorf("retain with an active Job: %+v", g.Deletes)
	}
	ext := obj(deleting, annotate(ExternallyManagedAnnotation, "x"), func(u *unstructured.Unstructured) {
		u.SetFinalizers([]string{"terraformmachine.infrastructure.cluster.x-k8s.io"})
	})
	if g := Of("TerraformMachine", ext, env()); g.Deletes == nil || g.Deletes.AfterLockCheck || !g.BeforeLockCheck {
		t.Errorf("externally managed: %+v", g)
	}
}

// Resolve follows CAPTF's order: own, the cluster's spec.defaults, the
// cluster's own field, the built-in default.
func TestResolve(t *testing.T) {
	cluster := tc(set(int64(900), "spec", "drift", "intervalSeconds"), set(int64(120), "spec", "jobs", "lockTimeoutSeconds"),
		set(int64(7200), "spec", "defaults", "jobs", "activeDeadlineSeconds"), set(int64(30), "spec", "defaults", "membershipRefreshIntervalSeconds"))
	e := Resolve("TerraformMachine", obj(), cluster)
	if e.Drift.N != 900 || e.LockTimeout.N != 120 || e.Deadline.N != 7200 || e.Policy.S != "Destroy" || e.Health.N != 0 || e.Membership.N != 0 {
		t.Errorf("machine: %+v", e)
	}
	e = Resolve("TerraformMachine", obj(set(int64(60), "spec", "jobs", "lockTimeoutSeconds"), set(int64(0), "spec", "drift", "intervalSeconds")), cluster)
	if e.Drift.N != 0 || e.LockTimeout.N != 60 || e.LockTimeout.From != "spec.jobs.lockTimeoutSeconds" {
		t.Errorf("own fields: %+v", e)
	}
	e = Resolve("TerraformMachinePool", objOf("TerraformMachinePool"), cluster)
	if e.Drift.N != 900 || e.Membership.N != 30 {
		t.Errorf("pool: %+v", e)
	}
	// A pool's inherited interval is the first set, 0 included, and used
	// only when positive (effective.go resolvePool).
	e = Resolve("TerraformMachinePool", objOf("TerraformMachinePool"), tc(set(int64(0), "spec", "defaults", "drift", "intervalSeconds"), set(int64(900), "spec", "drift", "intervalSeconds")))
	if e.Drift.N != DefaultDrift {
		t.Errorf("pool, inherited 0: %+v", e.Drift)
	}
	e = Resolve("TerraformCluster", objOf("TerraformCluster", set(int64(0), "spec", "jobs", "lockTimeoutSeconds")), cluster)
	if e.Drift.N != DefaultDrift || e.LockTimeout.N != 0 || e.Deadline.N != DefaultDeadlineSeconds || e.Policy.S != "Destroy" {
		t.Errorf("cluster: %+v", e)
	}
	e = Resolve("TerraformMachine", obj(), Cluster{Read: true, Why: "none"})
	if !e.Policy.Known || e.Policy.S != "" || e.Drift.N != DefaultDrift || e.LockTimeout.N != DefaultLockTimeoutSeconds {
		t.Errorf("no cluster: %+v", e)
	}
	e = Resolve("TerraformMachine", obj(set("Retain", "spec", "deletionPolicy")), Cluster{Why: "Forbidden"})
	if !e.Policy.Known || e.Policy.S != "Retain" || e.Drift.Known || e.LockTimeout.Known {
		t.Errorf("cluster unread, own policy: %+v", e)
	}
}

// opNamed is the kind of Job a test row's expected Next names by its
// first words, "" where the row expects none.
func opNamed(next string) Op {
	switch {
	case strings.HasPrefix(next, "the restore Job"):
		return OpRestore
	case strings.HasPrefix(next, "the destroy Job"):
		return OpDestroy
	case strings.HasPrefix(next, "a drift Job"), strings.HasPrefix(next, "a membership refresh Job"), strings.HasPrefix(next, "a health-check refresh Job"), strings.HasPrefix(next, "the refresh CAPTF runs"), strings.HasPrefix(next, "a refresh while"):
		return OpRefresh
	}
	return ""
}
