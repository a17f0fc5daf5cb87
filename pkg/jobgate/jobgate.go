// Package jobgate says whether CAPTF will start a runner Job for an object,
// and whether it deletes the object's lock Lease itself. A stale lock is
// force-unlocked only by a Job CAPTF creates; without one the lock stays,
// unless one of CAPTF's deletion paths deletes the Lease, whoever holds
// it (Retain, the release of an externally managed object, the cleanup
// after a destroy or of a deletion without state).
//
// The rules follow CAPTF's reconcile (CAPTF v0.1.x) from its preamble to
// the code that creates the Job; docs/how-it-decides.md names each file
// and commit. They read the object as CAPTF's reconcile leaves it
// (annotations, spec, status conditions) and what the caller read around
// it (Env): the TerraformCluster it inherits from, its Jobs, and, for an
// object being deleted, whether it has state, its inputs records and
// state backups, and whether its namespace is being deleted. What the
// caller did not read is "unsure", never "clears". Nothing here reads
// anything: the package has no client, so that the decision is the same
// wherever it is made.
package jobgate

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// State is what the gates allow.
type State int

const (
	// Open: no gate is set; the object's next Job carries the force-unlock.
	Open State = iota
	// Closed: a gate stops every Job, so no Job force-unlocks the lock.
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
	// owner, an owner gate, a blocked or unresolved deletion, the cleanup
	// after a destroy) or the object is paused. Any StateLocked or
	// StateRead it shows is then from an earlier pass.
	Quiet bool
	// BeforeLockCheck is true when CAPTF's reconcile stops in its
	// preamble, before its lock check runs.
	BeforeLockCheck bool
	// Next names the Job that would carry the force-unlock, when one is
	// expected or possible ("" when none is known); NextOp is its kind,
	// for the rules that depend on it (Next may quote names from the
	// cluster, so it is never parsed).
	Next   string
	NextOp Op
	// Deletes is set when CAPTF deletes the lock Lease itself, without a
	// Job; nil when it does not.
	Deletes *Deletion
	// Releases is true when CAPTF lets the object go (drops its
	// finalizer) without a Job and without deleting the Lease: the lock
	// then stays with no controller to read it.
	Releases bool
	// MaybeBeforeLockCheck is true when CAPTF's preamble may stop before
	// the lock check, depending on what could not be read (an object
	// without an owner reference that CAPTF may release there).
	MaybeBeforeLockCheck bool
}

// Deletion is one of CAPTF's paths that delete an object's lock Lease
// without a Job and without looking at its holder (state.DeleteLock: a
// plain delete, no precondition).
type Deletion struct {
	// Path is the CAPTF code that deletes it: PathRetain,
	// PathExternallyManaged, PathCleanupAfterDestroy or
	// PathCleanupWithoutState.
	Path string
	// When says when it happens.
	When string
	// Why names the evidence and the CAPTF code.
	Why string
	// Certain is false when it depends on what the plugin could not read
	// or cannot know (When and Why say what).
	Certain bool
	// AfterLockCheck is true for the paths that run after CAPTF's lock
	// check in the same reconcile: a lock check that fails stops them.
	// The release of an externally managed object runs before it.
	AfterLockCheck bool
}

// The deletion paths.
const (
	// PathRetain: deletionPolicy Retain (retain.go Retain).
	PathRetain = "Retain"
	// PathExternallyManaged: an externally managed object being deleted
	// (preamble.go releaseExternallyManaged, which calls Retain).
	PathExternallyManaged = "ExternallyManagedRelease"
	// PathCleanupAfterDestroy: after a successful destroy (cleanup.go
	// Cleanup).
	PathCleanupAfterDestroy = "CleanupAfterDestroy"
	// PathCleanupWithoutState: a deletion without state (cleanup.go
	// Cleanup).
	PathCleanupWithoutState = "CleanupWithoutState"
	// PathOrphanSweep: the manager's sweep of a namespace without
	// Terraform objects (internal/rbac/sweep.go SweepNamespace).
	PathOrphanSweep = "OrphanSweep"
)

// OrphanSweep is the deletion of every captf.io/managed=true Lease of a
// namespace that holds no TerraformCluster, TerraformMachine or
// TerraformMachinePool, lock Leases included, whoever holds them: CAPTF's
// manager sweeps such namespaces at start-up, every --sync-period and
// after it removes a finalizer (internal/rbac/sweep.go Sweep and
// SweepNamespace at 16ca67d3711e1eb42cfbf3acd89c0d42f6970517; the backend
// labels every lock Lease it creates for CAPTF with captf.io/managed=true,
// state.BackendLabels). Not certain: it runs only while a CAPTF manager
// runs, and only if the namespace is still empty when it looks.
var OrphanSweep = Deletion{
	Path: PathOrphanSweep,
	When: "at the CAPTF manager's next sweep of namespaces without Terraform objects (at its start, every --sync-period, 10 min by default, and after it removes a finalizer), if the namespace is still without one then",
	Why:  "the namespace holds no TerraformCluster, TerraformMachine or TerraformMachinePool, and the sweep deletes every Lease labelled captf.io/managed=true there, whoever holds it (internal/rbac/sweep.go SweepNamespace)",
}

// HolderStillWriting is what a deletion of the Lease means for a holder
// that still runs (the kubernetes backend: Unlock GETs the Lease and
// returns its error; Lock creates a missing Lease).
const HolderStillWriting = "a holder that still runs is not stopped by it: its own unlock then fails (the Lease is not found), and another client can create a new lock and write the state at the same time"

// Presence is whether something the decision needs was found.
type Presence int

const (
	// Unread: it could not be read.
	Unread Presence = iota
	// Absent: it was read and is not there.
	Absent
	// Present: it is there.
	Present
)

// Env is what the caller read around the object. Its zero value is
// "nothing read": every Presence is Unread, Records is unread, and the
// rules then say "unsure" wherever the unread part decides.
type Env struct {
	// Cluster is what CAPTF's owner lookup finds for a TerraformMachine or
	// TerraformMachinePool with an owner of its kind; unused for a
	// TerraformCluster.
	Cluster Cluster
	// State is whether the object's state Secret exists; StateWhy says
	// why it is Unread. Read for an object being deleted only.
	State    Presence
	StateWhy string
	// ChunkReason and ChunkWhy are what CAPTF's next read of the state
	// Secrets' names finds (ChunkSet): "" where they order or were not
	// listed, else the StateReadable reason, StateInconsistent or
	// StateCorrupt, with which CAPTF then holds the state, whatever it
	// recorded before.
	ChunkReason, ChunkWhy string
	// RetainedFrom is the uid of an earlier object of the name that one
	// of the object's listed Secrets says retained it, and RetainedIn
	// which Secret says so (RetainedFrom); "" for none.
	RetainedFrom, RetainedIn string
	// JobsRead is false when the object's Jobs could not be read, or the
	// object's uid is unknown so that its Jobs cannot be told from those
	// of an earlier object of its name; JobsWhy says which.
	JobsRead bool
	JobsWhy  string
	// ActiveJob is the object's active Job as CAPTF picks it, "" for none.
	ActiveJob string
	// DestroySucceeded is true when its newest finished destroy Job
	// succeeded.
	DestroySucceeded bool
	// LastApplySucceeded is when its newest finished apply Job finished,
	// if that Job succeeded; nil when none is kept or it failed
	// (reconcile.go lastApplySucceeded).
	LastApplySucceeded *time.Time
	// UnbookkeptApply is whether an apply Job of the object finished and
	// CAPTF's bookkeeping has not read it yet (no BookkeptAnnotation), or
	// status.activeJob names an apply Job that is gone
	// (preamble.go unbookkeptApply); Unread when not worked out.
	UnbookkeptApply Presence
	// Records are the object's inputs records and state backups
	// (RecordsOf); read for an object being deleted.
	Records Records
	// NamespaceDeleting is whether the object's namespace has a
	// deletionTimestamp: Present when it has, Absent when not, Unread
	// when it could not be read (NamespaceWhy says why). In a
	// terminating namespace the API server refuses every create, so
	// CAPTF can create no Job there (reconcile.go startOp,
	// namespaceTerminatingHold, deletionCredentials).
	NamespaceDeleting Presence
	NamespaceWhy      string
}

// Annotations CAPTF and Cluster API read.
const (
	PausedAnnotation            = "cluster.x-k8s.io/paused"
	ExternallyManagedAnnotation = "cluster.x-k8s.io/managed-by"
	// RestoreAnnotation asks CAPTF for a restore Job of a state backup.
	RestoreAnnotation = "captf.io/restore-state"
	// ClusterNameLabel names an object's CAPI Cluster.
	ClusterNameLabel = "cluster.x-k8s.io/cluster-name"
	// CAPIGroup is Cluster API's group.
	CAPIGroup = "cluster.x-k8s.io"
)

// OwnerKind is the CAPI kind whose owner reference CAPTF's preamble looks
// for on an object of kind: a TerraformCluster's Cluster
// (util.GetOwnerCluster), a TerraformMachine's Machine
// (util.GetOwnerMachine), a TerraformMachinePool's MachinePool
// (util.GetOwnerMachinePool).
func OwnerKind(kind string) string {
	switch kind {
	case "TerraformMachine":
		return "Machine"
	case "TerraformMachinePool":
		return "MachinePool"
	}
	return "Cluster"
}

// HasOwnerRef is whether u has an owner reference of OwnerKind(kind) in
// Cluster API's group, the one CAPTF's owner lookup follows.
func HasOwnerRef(kind string, u *unstructured.Unstructured) bool {
	for _, r := range u.GetOwnerReferences() {
		gv, err := schema.ParseGroupVersion(r.APIVersion)
		if err == nil && r.Kind == OwnerKind(kind) && gv.Group == CAPIGroup {
			return true
		}
	}
	return false
}

// kindCode is the short kind CAPTF names an object's Jobs and inputs
// Secrets with.
func kindCode(kind string) string {
	switch kind {
	case "TerraformMachine":
		return "m"
	case "TerraformMachinePool":
		return "mp"
	}
	return "c"
}

// finalizer is CAPTF's finalizer on an object of kind.
func finalizer(kind string) string { return strings.ToLower(kind) + ".infrastructure.cluster.x-k8s.io" }

// heldState are the StateReadable=False reasons of a state CAPTF holds:
// no Job starts but a restore (reconcile.go run: held && !restore).
var heldState = map[string]bool{
	"StateEncrypted": true, "StateCorrupt": true, "StateInconsistent": true,
	"StateLost": true, "ApplyOutcomeUnknown": true,
}

// Of reads the gates of one CAPTF object (kind is its exact Kind), in the
// order of CAPTF's reconcile: the preamble (externally managed, owner,
// the release of an ownerless deletion, pause), then the deletion or the
// Job decision.
func Of(kind string, u *unstructured.Unstructured, env Env) Gate {
	deleting := u.GetDeletionTimestamp() != nil
	conds := conditions(u)
	annotations := u.GetAnnotations()
	// Preamble, stage 1 (preamble.go Preamble).
	if _, ok := annotations[ExternallyManagedAnnotation]; ok {
		if !deleting {
			return preamble(closed("the object has the %s annotation: CAPTF leaves it to another controller, stops before any write and starts no Job", ExternallyManagedAnnotation))
		}
		return externallyManaged(kind, u, env)
	}
	// Stage 2: the owner lookup. A gate stops the reconcile only while
	// the object is not being deleted; an ownerless deletion may be
	// released here, before the pause and the lock check.
	hasRef := HasOwnerRef(kind, u)
	var maybeReleased string
	switch {
	case !hasRef && !deleting:
		reason := "WaitingForOwner"
		if kind != "TerraformCluster" && len(u.GetOwnerReferences()) > 0 {
			reason = "WaitingForOwner" + OwnerKind(kind)
		}
		return preamble(closed("the object has no %s owner reference: CAPTF waits for one (DependenciesReady %s) and stops before the lock check, so no Job starts", OwnerKind(kind), reason))
	case !hasRef:
		released, release, prefix := ownerless(kind, u, conds, env)
		switch release {
		case Present:
			return released
		case Unread:
			maybeReleased = prefix
		}
		// Without an owner reference CAPTF's owner lookup never reaches
		// a TerraformCluster (shared/owner.go ResolveOwner).
		if inherits(kind) {
			env.Cluster = Cluster{Read: true, Why: "CAPTF looks a TerraformCluster up only for an object with a " + OwnerKind(kind) + " owner reference"}
		}
	case !deleting:
		if env.Cluster.NotTerraform != "" && inherits(kind) {
			return preamble(closed("%s: CAPTF's owner gate ClusterNotTerraform stops before the lock check, so no Job starts", env.Cluster.NotTerraform))
		}
		if c, ok := conds["DependenciesReady"]; ok && c.status != "True" && c.reason == "OwnerMismatch" {
			if kind == "TerraformMachine" && isProvisioned(u) {
				return unsure("DependenciesReady says %s, but CAPTF re-derives that gate on every reconcile from the Machine, which the plugin does not read, and nothing rewrites the condition of a provisioned TerraformMachine but that gate: if the Machine still does not reference this object, CAPTF stops before the lock check; if it does, the condition is left over", c.says())
			}
			return preamble(closed("CAPTF stops before the lock check (DependenciesReady %s), so no Job starts", c.says()))
		}
	}
	g := afterOwner(kind, u, conds, env, deleting)
	if maybeReleased != "" {
		// Released or not, no Job starts where g starts none.
		g = either(g, maybeReleased)
		g.MaybeBeforeLockCheck = true
		g.Releases = g.Releases || (g.State == Closed && g.Deletes == nil)
	}
	return g
}

// afterOwner is the rest of the reconcile once the owner lookup lets it
// go on: the pause (stage 4; the lock check still runs while paused),
// then the deletion or the Job decision.
func afterOwner(kind string, u *unstructured.Unstructured, conds map[string]condition, env Env, deleting bool) Gate {
	paused := ""
	if _, ok := u.GetAnnotations()[PausedAnnotation]; ok {
		paused = "annotation " + PausedAnnotation
	} else if c, ok := conds["Paused"]; ok && c.status == "True" {
		paused = "condition Paused: " + c.says()
	}
	if paused != "" {
		g := closed("the object is paused (%s): CAPTF starts no Job while it is", paused)
		if deleting {
			g = closed("the object is paused (%s): CAPTF runs no destroy, no Retain and no cleanup while it is", paused)
		}
		g.Quiet = true
		return g
	}
	if deleting {
		return deletion(kind, u, conds, env)
	}
	return live(kind, u, conds, env)
}

// ownerless is the preamble's release of a deleted object without an
// owner reference (preamble.go ownerlessRelease): CAPTF drops its
// finalizer there, without a Job and leaving the Lease, when it has no
// state (any Secret of StateSelector), no active Job, no apply Job its
// bookkeeping has not read, no blocked deletion and no sign of an apply
// (everApplied: an unconfirmed apply, provisioned, the inputs records'
// marks, a state backup). It returns that release's gate, whether CAPTF
// releases it (Present), goes on to the full reconcile (Absent) or
// whether that depends on what could not be read (Unread, with the
// prefix that says what).
func ownerless(kind string, u *unstructured.Unstructured, conds map[string]condition, env Env) (Gate, Presence, string) {
	var unknown []string
	switch env.State {
	case Present:
		return Gate{}, Absent, ""
	case Unread:
		unknown = append(unknown, "whether its state Secret exists ("+env.StateWhy+")")
	}
	switch {
	case !env.JobsRead:
		unknown = append(unknown, "its Jobs ("+env.JobsWhy+")")
	case env.ActiveJob != "" || env.UnbookkeptApply == Present:
		return Gate{}, Absent, ""
	case env.UnbookkeptApply == Unread:
		unknown = append(unknown, "whether an apply Job of it is not bookkept yet")
	}
	if c, ok := conds["DeletionBlocked"]; ok && c.status == "True" && kind == "TerraformCluster" {
		return Gate{}, Absent, ""
	}
	applied, _, known := appliedBefore(isProvisioned(u), env.Records)
	switch {
	case applied || (known && env.Records.Interrupted != ""):
		return Gate{}, Absent, ""
	case !known:
		unknown = append(unknown, "its inputs records and state backups ("+whyOr(env.Records.Why)+")")
	}
	g := preamble(closed("the object is being deleted without a %s owner reference, state, Job or sign of an apply: CAPTF drops its finalizer in its preamble, starting no Job and leaving the Lease", OwnerKind(kind)))
	g.Releases = true
	if len(unknown) == 0 {
		return g, Present, ""
	}
	return g, Unread, fmt.Sprintf("it has no %s owner reference and %s could not be read: with no state, Job or sign of an apply CAPTF drops its finalizer in its preamble, starting no Job and leaving the Lease; otherwise", OwnerKind(kind), strings.Join(unknown, ", "))
}

// externallyManaged is the release of an externally managed object being
// deleted (preamble.go releaseExternallyManaged): with CAPTF's finalizer
// on it, once no Job of it runs, Retain keeps its state and deletes its
// lock Lease, before the lock check.
func externallyManaged(kind string, u *unstructured.Unstructured, env Env) Gate {
	if !hasFinalizer(u, finalizer(kind)) {
		g := preamble(closed("the object is being deleted with the %s annotation and without CAPTF's finalizer %s: CAPTF does nothing more with it, starts no Job and leaves the Lease", ExternallyManagedAnnotation, finalizer(kind)))
		g.Releases = true
		return g
	}
	g := preamble(closed("the object is being deleted with the %s annotation: CAPTF releases it without a Job", ExternallyManagedAnnotation))
	g.Deletes = &Deletion{
		Path:    PathExternallyManaged,
		When:    "at CAPTF's next reconcile of the object, once no Job of it runs and its run lease is free",
		Why:     "CAPTF releases an externally managed object being deleted as deletionPolicy Retain does, and Retain deletes the lock Lease, whoever holds it (preamble.go releaseExternallyManaged, retain.go Retain, state.DeleteLock)",
		Certain: true,
	}
	return withJobs(g, env)
}

// deletion follows CAPTF's destroy path for an object being deleted
// (reconcile.go run): the inputs gate, the plan gating, the drift
// schedule and the Job policy check do not apply to it.
func deletion(kind string, u *unstructured.Unstructured, conds map[string]condition, env Env) Gate {
	g := deletionSteps(kind, u, conds, env)
	if !env.JobsRead {
		g = uncertain(g, "its Jobs could not be read ("+env.JobsWhy+"): if its newest destroy Job succeeded, CAPTF's cleanup deletes the Lease instead; otherwise")
		if g.Deletes == nil {
			g.Deletes = &Deletion{Path: PathCleanupAfterDestroy, When: "if its newest destroy Job succeeded: at CAPTF's next reconcile of the object, once no Job of it runs",
				Why: "after a successful destroy CAPTF's cleanup deletes the state Secrets and the lock Lease, whoever holds it (cleanup.go Cleanup, state.DeleteLock); the Jobs could not be read (" + env.JobsWhy + ")", AfterLockCheck: true}
		}
	}
	return withJobs(g, env)
}

func deletionSteps(kind string, u *unstructured.Unstructured, conds map[string]condition, env Env) Gate {
	if env.JobsRead && env.DestroySucceeded {
		g := closed("its newest destroy Job succeeded: CAPTF runs its cleanup and starts no Job")
		g.Quiet = true
		g.Deletes = &Deletion{Path: PathCleanupAfterDestroy, When: "at CAPTF's next reconcile of the object, once no Job of it runs and its run lease is free",
			Why: "after a successful destroy CAPTF's cleanup deletes the state Secrets and the lock Lease, whoever holds it, and drops the finalizer (reconcile.go run, cleanup.go Cleanup, state.DeleteLock)", Certain: true, AfterLockCheck: true}
		return g
	}
	if c, ok := conds["DeletionBlocked"]; ok && c.status == "True" && kind == "TerraformCluster" {
		g := closed("its deletion is blocked (DeletionBlocked %s): no destroy Job starts, and no Retain runs, until its machines and pools are gone", c.says())
		g.Quiet = true
		return g
	}
	// A machine or pool whose owner does not reference it back: CAPTF's
	// ResolveOwner returns before LookupCluster, so nothing is inherited
	// (shared/owner.go). The plugin does not read Machines or
	// MachinePools, so whether the mismatch still holds is not known.
	c, mismatch := conds["DependenciesReady"]
	mismatch = mismatch && c.status != "True" && c.reason == "OwnerMismatch" && inherits(kind) && str(u, "spec", "deletionPolicy") == ""
	if !mismatch {
		return policySteps(kind, u, conds, env)
	}
	if p := Resolve(kind, u, env.Cluster).Policy; p.Known && p.S == "" {
		// Unresolved either way.
		return policySteps(kind, u, conds, env)
	}
	return either(policySteps(kind, u, conds, env), fmt.Sprintf("DependenciesReady says %s, which CAPTF re-derives from the %s the plugin does not read: if that owner still does not reference it back, CAPTF looks up no TerraformCluster, its deletionPolicy is unresolved (DeletionPolicyUnresolved) and neither a destroy nor a Retain runs; otherwise", c.says(), OwnerKind(kind)))
}

// policySteps follows the deletion from its policy on: an unresolved
// policy, a retained state, Retain, a held state, no state, then the
// destroy Job.
func policySteps(kind string, u *unstructured.Unstructured, conds map[string]condition, env Env) Gate {
	eff := Resolve(kind, u, env.Cluster)
	// CAPTF writes DeletionPolicyUnresolved only for an object without a
	// policy of its own whose TerraformCluster it cannot find; one left
	// over once the object sets a policy, or once the plugin finds the
	// TerraformCluster, is rewritten at CAPTF's next pass (reconcile.go
	// setup resets Deleting).
	if c, ok := conds["Deleting"]; ok && c.reason == "DeletionPolicyUnresolved" && str(u, "spec", "deletionPolicy") == "" && (!env.Cluster.Read || env.Cluster.Object == nil) {
		g := closed("its deletion waits (Deleting %s): neither a destroy nor a Retain runs", c.says())
		g.Quiet = true
		return g
	}
	// A retained state is found by CAPTF's read of the state, after a
	// policy that does not resolve (reconcile.go run, at
	// ade7dc79d93b624f3a23cffb2e55f6487a315ab7: policyUnresolved, then
	// readState's checkRetained) and before anything the policy decides
	// (review26f m2).
	retained := retainedWhy(u, conds, env)
	switch p := eff.Policy; {
	case !p.Known && retained != "":
		g := closed("the object is being deleted and its deletionPolicy is %s: if it resolves, %s, and it releases the object without a Job and without touching the Lease; if it does not, CAPTF holds the deletion (DeletionPolicyUnresolved); no Job starts either way", p.From, retained)
		// Not Releases: in the unresolved half the object stays, held
		// (review26g N3); the lock stays in both.
		return g
	case !p.Known:
		// Under Destroy, a held state holds the deletion as below
		// (review26d n1).
		destroy := "under Destroy the destroy Job force-unlocks the lock"
		if c, ok := conds["StateReadable"]; ok && c.status == "False" && heldState[c.reason] {
			destroy = "under Destroy CAPTF holds the deletion on the state (StateReadable " + c.says() + "), and no Job but a restore asked for starts"
		} else if env.ChunkReason != "" {
			destroy = "under Destroy " + nextRead(env) + ", so it holds the deletion on the state, and no Job but a restore asked for starts"
		}
		g := unsure("the object is being deleted and its deletionPolicy is %s: %s; under Retain no Job starts", p.From, destroy)
		g.Deletes = &Deletion{Path: PathRetain, When: "if the inherited policy is Retain: at CAPTF's next reconcile of the object, once no Job of it runs and its run lease is free",
			Why: "Retain deletes the lock Lease, whoever holds it (retain.go Retain, state.DeleteLock); the policy is " + p.From, AfterLockCheck: true}
		return g
	case p.S == "":
		g := closed("its deletionPolicy is unresolved (%s): CAPTF holds the deletion (DeletionPolicyUnresolved), and neither a destroy nor a Retain runs", p.From)
		g.Quiet = true
		return g
	}
	if retained != "" {
		g := closed("%s: it releases the object without a Job and without touching the Lease", retained)
		g.Releases = true
		return g
	}
	if eff.Policy.S == "Retain" {
		g := closed("the object is being deleted under deletionPolicy Retain (%s): no Job starts", eff.Policy.From)
		g.Deletes = &Deletion{Path: PathRetain, When: "at CAPTF's next reconcile of the object, once no Job of it runs and its run lease is free",
			Why: "deletionPolicy Retain keeps the state and drops the finalizer without a Job, and Retain deletes the lock Lease, whoever holds it (reconcile.go run, decide.go ActionRetain, retain.go Retain, state.DeleteLock)", Certain: true, AfterLockCheck: true}
		// readState's checkRetained runs before the policy's action, and
		// a Secret of the object's that an earlier object retained makes
		// it a release that leaves the Lease (reconcile.go run at
		// ade7dc79, retain.go heldOnRetained at 665f88bb): certain only
		// when the plugin read the Secrets CAPTF checks (review26g F9).
		if unread := unreadRetained(env); unread != "" {
			g.Deletes.Certain = false
			g.Deletes.When += ", unless CAPTF's read finds a Secret of the object's retained by an earlier object (label " + RetainedLabel + "), which the plugin could not check (" + unread + "): then CAPTF releases the object and leaves the Lease"
		}
		return g
	}
	if c, ok := conds["StateReadable"]; ok && c.status == "False" && heldState[c.reason] {
		return held(u, conds, env, "CAPTF holds the deletion on the state (StateReadable "+c.says()+")", "; the destroy follows")
	}
	if env.ChunkReason != "" {
		return held(u, conds, env, nextRead(env)+", so it holds the deletion on the state", "; the destroy follows")
	}
	switch env.State {
	case Absent:
		return noState(u, conds, env)
	case Unread:
		g := unsure("whether its state Secret exists could not be read (%s): with one, the destroy Job force-unlocks the lock; without one, no Job starts", env.StateWhy)
		g.Next, g.NextOp = "the destroy Job", OpDestroy
		g.Deletes = &Deletion{Path: PathCleanupWithoutState, When: "if it has no state Secret: at CAPTF's next reconcile of the object, once no Job of it runs, unless CAPTF finds that it applied before",
			Why: "a deletion without state drops the finalizer without a Job, and the cleanup deletes the lock Lease, whoever holds it (decide.go ActionDropFinalizer, cleanup.go Cleanup, state.DeleteLock)", AfterLockCheck: true}
		return creates(g, u, conds, env, true)
	}
	next := "the destroy Job"
	if c, ok := conds["ApplyJobSucceeded"]; ok {
		switch c.reason {
		case "DestroyFailed":
			if !env.Records.Read {
				return creates(withNext(unsure("the last destroy failed (ApplyJobSucceeded %s): when its inputs Secrets are missing no destroy Job starts; otherwise it is retried after its backoff", c.says()), OpDestroy, next), u, conds, env, true)
			}
			next = "the destroy Job, retried after its backoff (ApplyJobSucceeded " + c.says() + ")"
		case "IdentityNotAllowed":
			return creates(withNext(unsure("the last destroy was refused (ApplyJobSucceeded %s); CAPTF checks the identity again when the destroy is about to start", c.says()), OpDestroy, next), u, conds, env, true)
		}
	}
	for _, t := range []string{"IdentityAllowed", "CredentialsMirrored", "RunnerRBACReady"} {
		if c, ok := conds[t]; ok && c.status != "True" {
			return creates(withNext(unsure("the runner's credentials were not ready (%s %s); CAPTF prepares them again when the destroy is about to start", t, c.says()), OpDestroy, next), u, conds, env, true)
		}
	}
	// What the destroy renders (reconcile.go destroyFiles): the inputs
	// record, else, for a mutable kind, its inputs built again.
	durable, applied := InputsSecrets(kindCode(kind), u.GetName())
	switch r := env.Records; {
	case !r.Read && kind == "TerraformMachine":
		return creates(withNext(unsure("whether its inputs records exist could not be read (%s): the destroy renders them, and without them CAPTF cannot render it (DestroyFailed) and starts no Job", whyOr(r.Why)), OpDestroy, next), u, conds, env, true)
	case !r.Read:
		return creates(withNext(unsure("whether its inputs records exist could not be read (%s): the destroy renders them; without them CAPTF builds its inputs again, and the destroy starts only if its dependency gates pass and the inputs fit a Secret", whyOr(r.Why)), OpDestroy, next), u, conds, env, true)
	case r.Inputs:
		return creates(withNext(Gate{State: Open}, OpDestroy, next), u, conds, env, true)
	case kind == "TerraformMachine":
		return closed("it has no inputs record (Secrets %s and %s are missing): CAPTF cannot render its destroy (ApplyJobSucceeded False/DestroyFailed) and starts no Job until they are restored or it is set to deletionPolicy Retain", durable, applied)
	}
	return creates(withNext(unsure("it has no inputs record (Secrets %s and %s are missing), so CAPTF builds its inputs again for the destroy: the destroy Job starts only if its dependency gates pass (else DestroyFailed) and the inputs fit a Secret (else InputsTooLarge)", durable, applied), OpDestroy, next), u, conds, env, true)
}

// noState is a deletion without state (reconcile.go noState, decide.go
// DeletingWithoutState): held when the object applied before
// (appliedBefore: StateLost) or an apply's outcome is unconfirmed
// (ApplyOutcomeUnknown), where only a restore asked for starts a Job;
// otherwise CAPTF drops the finalizer and its cleanup deletes the Lease.
func noState(u *unstructured.Unstructured, conds map[string]condition, env Env) Gate {
	applied, why, known := appliedBefore(isProvisioned(u), env.Records)
	cleanup := &Deletion{Path: PathCleanupWithoutState, When: "at CAPTF's next reconcile of the object, once no Job of it runs and its run lease is free",
		Why: "a deletion without state drops the finalizer without a Job, and the cleanup deletes the lock Lease, whoever holds it (decide.go ActionDropFinalizer, cleanup.go Cleanup, state.DeleteLock)", Certain: true, AfterLockCheck: true}
	switch {
	case applied:
		return held(u, conds, env, "its state Secret is missing although "+why+": CAPTF holds the deletion (StateReadable False/StateLost)", "; the destroy follows")
	case known && env.Records.Interrupted != "":
		return held(u, conds, env, "it has no state Secret, but apply Job "+env.Records.Interrupted+" may have created resources: CAPTF holds the deletion (StateReadable False/ApplyOutcomeUnknown)", "")
	case !known:
		cleanup.Certain = false
		cleanup.When += ", unless CAPTF finds that it applied before (an applied inputs record, a state backup, an apply whose outcome is unknown), when it holds the deletion instead"
		g := closed("it has no state Secret: CAPTF starts no destroy Job")
		if serial, ok := restoreRequested(u); ok {
			// Held, a restore asked for starts (restore.go restoreTarget).
			g = creates(withNext(unsure("it has no state Secret: if CAPTF finds that it applied before, it holds the deletion and only the restore Job asked for (%s=%s) starts, if that backup exists; otherwise no Job starts", RestoreAnnotation, serial), OpRestore, "the restore Job"), u, conds, env, true)
		}
		g.Deletes = cleanup
		return g
	}
	if env.UnbookkeptApply != Absent {
		cleanup.Certain = false
		cleanup.When += ", unless an apply Job CAPTF has not bookkept yet succeeded or ended without a result, when it holds the deletion instead"
	}
	g := closed("it has no state Secret and no sign of an apply: CAPTF starts no destroy Job")
	g.Deletes = cleanup
	return g
}

// nextRead says what CAPTF's next read of the state finds in its
// Secrets' names (Env.ChunkReason): readState writes StateReadable
// False with that reason and the object is held (reconcile.go readState
// at 99fd973d5e3cc29b95dce3c83e8a571f019a7597, state.orderChunks).
func nextRead(env Env) string {
	return fmt.Sprintf("CAPTF's next read of its state fails on the state Secrets' names (%s), and it writes StateReadable False/%s", env.ChunkWhy, env.ChunkReason)
}

// unreadRetained says which of the Secrets CAPTF's checkRetained reads
// the plugin could not read: the state Secrets, or the inputs Secrets
// and backups (Records); "" when it read both.
func unreadRetained(env Env) string {
	switch {
	case env.State == Unread:
		return "its state Secrets: " + whyOr(env.StateWhy)
	case !env.Records.Read:
		return "its inputs Secrets and backups: " + whyOr(env.Records.Why)
	}
	return ""
}

// retainedWhy says why CAPTF holds u on a state an earlier object
// retained: StateReadable RetainedStateFound, or a retained Secret the
// plugin read (retainedText); "" when neither, or when u adopts it
// (spec.adoptRetainedState). live and policySteps both ask.
func retainedWhy(u *unstructured.Unstructured, conds map[string]condition, env Env) string {
	switch c, ok := conds["StateReadable"]; {
	case adopts(u):
		return ""
	case ok && c.status == "False" && c.reason == "RetainedStateFound":
		return "CAPTF found the object's state retained by an earlier object of its name (StateReadable " + c.says() + ")"
	case env.RetainedFrom != "":
		return retainedText(env)
	}
	return ""
}

// retainedText says what CAPTF's next read finds of a Secret of the
// object's that an earlier object retained (Env.RetainedFrom).
func retainedText(env Env) string {
	return fmt.Sprintf("%s carries %s=%s, an earlier object's: CAPTF's next read of its state finds it before anything else (checkRetained) and writes StateReadable False/RetainedStateFound", env.RetainedIn, RetainedLabel, env.RetainedFrom)
}

// held is a deletion or an object CAPTF holds on its state (why): no Job
// starts but a restore asked for, which comes first if its backup exists
// (reconcile.go run: held && !restore; restore.go restoreTarget), and
// carries the force-unlock.
func held(u *unstructured.Unstructured, conds map[string]condition, env Env, why, after string) Gate {
	serial, ok := restoreRequested(u)
	switch {
	case !ok:
		return closed("%s: no Job but a restore starts", why)
	case env.Records.Read && !env.Records.Backups:
		return closed("%s, and the restore asked for (%s=%s) has no state backup to push (RestoreBackupNotFound): no Job starts", why, RestoreAnnotation, serial)
	}
	g := unsure("%s; only the restore Job asked for (%s=%s) starts, if that backup exists, and it carries the force-unlock%s", why, RestoreAnnotation, serial, after)
	g.Next, g.NextOp = "the restore Job", OpRestore
	return creates(g, u, conds, env, u.GetDeletionTimestamp() != nil)
}

// creates is g, a gate under which a Job may start, as the object's
// namespace allows it: in a terminating namespace the API server refuses
// every create, so CAPTF's leases and Job are never created
// (reconcile.go startOp and namespaceTerminatingHold, which says so in
// Deleting or ApplyJobSucceeded; a deletion's credentials,
// deletionCredentials). Retain and the cleanups only delete, so a
// deletion of the Lease stays. Whether the namespace is terminating
// decides for a deleted object; a live object in a terminating namespace
// is itself deleted by the namespace's deletion, so an unread namespace
// changes nothing for it.
func creates(g Gate, u *unstructured.Unstructured, conds map[string]condition, env Env, deleting bool) Gate {
	if g.State == Closed {
		return g
	}
	ns := u.GetNamespace()
	terminating := env.NamespaceDeleting == Present
	for _, t := range []string{"Deleting", "ApplyJobSucceeded"} {
		if c, ok := conds[t]; ok && strings.HasPrefix(c.message, "Namespace "+ns+" is terminating") {
			terminating = true
		}
	}
	switch {
	case terminating:
		out := closed("namespace %s is being deleted: the API server refuses every create there, so CAPTF cannot create %s or any other Job (namespaceTerminatingHold)", ns, nextOr(g.Next, "its next Job"))
		if g.Deletes != nil {
			d := *g.Deletes
			out.Deletes = &d
		}
		return out
	case deleting && env.NamespaceDeleting == Unread && (g.State == Open || g.Next != ""):
		return uncertain(g, fmt.Sprintf("whether namespace %s is being deleted could not be read (%s): if it is, CAPTF can create no Job there; otherwise", ns, whyOr(env.NamespaceWhy)))
	}
	return g
}

// live follows CAPTF's Job decision for an object not being deleted
// (reconcile.go run and startOp, decide.go decide and schedule).
func live(kind string, u *unstructured.Unstructured, conds map[string]condition, env Env) Gate {
	if why := retainedWhy(u, conds, env); why != "" {
		// retain.go heldOnRetained returns before restoreTarget.
		return closed("%s: no Job starts, not even a restore, until spec.adoptRetainedState is set or those Secrets are deleted", why)
	}
	for _, t := range []string{"IdentityAllowed", "CredentialsMirrored", "RunnerRBACReady"} {
		if c, ok := conds[t]; ok && c.status != "True" {
			return closed("the runner's credentials are not ready (%s %s): CAPTF starts no Job until they are", t, c.says())
		}
	}
	serial, restore := restoreRequested(u)
	if restore && env.Records.Read && !env.Records.Backups {
		// restore.go restoreTarget: no backup of that serial, no restore.
		restore = false
	}
	if c, ok := conds["StateReadable"]; ok && c.status == "False" && heldState[c.reason] {
		return held(u, conds, env, "CAPTF holds the state (StateReadable "+c.says()+")", "")
	}
	if env.ChunkReason != "" {
		return held(u, conds, env, nextRead(env)+", so it holds the state", "")
	}
	g := schedule(kind, u, conds, env)
	if restore && g.State == Open {
		// decide.go: the restore asked for is the next op, if its backup
		// exists (restore.go restoreTarget).
		g.NextOp = OpRestore
		g.Next = "the restore Job asked for (" + RestoreAnnotation + "=" + serial + "), if that backup exists; else " + nextOr(g.Next, "its next Job")
	}
	if restore && g.State != Open {
		// decide.go: a restore comes before every other op, past the
		// dependency gates and the Job policy check.
		g = unsure("a restore is asked for (%s=%s): its Job starts first if that backup exists, and carries the force-unlock; otherwise %s", RestoreAnnotation, serial, g.Reason)
		g.Next, g.NextOp = "the restore Job", OpRestore
	}
	return creates(g, u, conds, env, false)
}

// schedule is whether a Job is due for an object not being deleted, and
// whether startOp lets it start.
func schedule(kind string, u *unstructured.Unstructured, conds map[string]condition, env Env) Gate {
	mutable := kind != "TerraformMachine"
	built := mutable || !isProvisioned(u)
	if c, ok := conds["DependenciesReady"]; ok && c.status != "True" && built && !leftOverOwnerGate(c.reason) {
		return unsure("a dependency gate is set (DependenciesReady %s): CAPTF starts no Job but a restore until it clears", c.says())
	}
	eff := Resolve(kind, u, env.Cluster)
	switch invalid, known, why := eff.PolicyInvalid(); {
	case !known:
		return unsure("whether CAPTF accepts the effective Job policy is unknown: %s", why)
	case invalid:
		return closed("the effective Job policy is invalid: %s; CAPTF refuses every Job but a destroy or a restore (ValidateEffectiveJobPolicy: ApplyJobSucceeded False/JobPolicyInvalid)", why)
	}
	if c, ok := conds["ApplyJobSucceeded"]; ok {
		switch c.reason {
		case "InputsTooLarge":
			if built {
				return closed("CAPTF holds its Jobs back (ApplyJobSucceeded %s) until the inputs shrink", c.says())
			}
		case "PlanAwaitingApproval", "DestructivePlanBlocked":
			return unsure("an apply waits for approval (ApplyJobSucceeded %s): while it waits for new inputs to be approved, refresh and drift Jobs wait too", c.says())
		}
	}
	if c, ok := conds["DriftJobSucceeded"]; ok && c.reason == "DurableInputsMissing" {
		return unsure("refresh and drift Jobs wait for their inputs (DriftJobSucceeded %s)", c.says())
	}
	if kind == "TerraformMachine" && isProvisioned(u) && env.Records.Read && !env.Records.Inputs {
		durable, applied := InputsSecrets(kindCode(kind), u.GetName())
		return closed("it has no inputs record (Secrets %s and %s are missing): the refresh and drift Jobs of a provisioned TerraformMachine render it, so CAPTF starts none (DriftJobSucceeded DurableInputsMissing); only a restore starts", durable, applied)
	}
	if kind == "TerraformMachinePool" {
		return withNext(Gate{State: Open}, OpRefresh, "a membership refresh Job ("+every(eff.Membership)+")")
	}
	if kind == "TerraformMachine" && isProvisioned(u) {
		switch h := eff.Health; {
		case h.Known && h.N > 0:
			return withNext(Gate{State: Open}, OpRefresh, fmt.Sprintf("a health-check refresh Job (every %d s: %s)", h.N, h.From))
		case !h.Known && (!eff.Drift.Known || eff.Drift.N == 0):
			return unsure("whether CAPTF refreshes its health is unknown: %s", h.From)
		}
	}
	switch d := eff.Drift; {
	case !d.Known:
		return unsure("whether drift Jobs are scheduled is unknown: the interval is %s", d.From)
	case d.N == DefaultDrift:
		return withNext(Gate{State: Open}, OpRefresh, "a drift Job, "+every(d))
	case d.N != 0:
		return withNext(Gate{State: Open}, OpRefresh, "a drift Job, "+every(d)+" ("+d.From+")")
	}
	off := fmt.Sprintf("drift is disabled (intervalSeconds 0 from %s)", eff.Drift.From)
	if kind == "TerraformMachine" && isProvisioned(u) {
		if env.JobsRead && env.LastApplySucceeded != nil && !refreshedSince(u, *env.LastApplySucceeded) {
			return withNext(Gate{State: Open}, OpRefresh, "the refresh CAPTF runs once after a successful apply")
		}
		if c, ok := conds["InfrastructureHealthy"]; ok && c.status == "False" && c.reason == "InstancePending" {
			return withNext(Gate{State: Open}, OpRefresh, "a refresh while its health is pending")
		}
		if !env.JobsRead {
			return unsure("%s and no health-check refresh is set; whether the refresh CAPTF runs once after an apply is still due is unknown: %s", off, env.JobsWhy)
		}
		return closed("no Job is due: %s, %s, and a provisioned TerraformMachine builds no inputs, so CAPTF decides UpToDate and does not requeue (decide.go schedule); only a restore or a state without its inputs hash starts one", off, eff.Health.From)
	}
	return unsure("%s, so no drift Job is scheduled: a Job starts only when its inputs change, an apply is retried or none was applied yet", off)
}

// leftOverOwnerGate are the DependenciesReady reasons only CAPTF's
// preamble writes, for an owner reference of the wrong kind: with the
// right one present (HasOwnerRef), the condition is left over.
func leftOverOwnerGate(reason string) bool {
	return reason == "WaitingForOwnerMachine" || reason == "WaitingForOwnerMachinePool"
}

// refreshedSince is whether status.lastRefresh is at or after t.
func refreshedSince(u *unstructured.Unstructured, t time.Time) bool {
	s := str(u, "status", "lastRefresh")
	r, err := time.Parse(time.RFC3339, s)
	return err == nil && !r.Before(t.Truncate(time.Second))
}

// restoreRequested is the serial captf.io/restore-state asks for, when
// it is one CAPTF would act on (trimmed, an integer of at least 1, not
// status.lastRestoredSerial); whether the backup exists is not known
// here.
func restoreRequested(u *unstructured.Unstructured) (string, bool) {
	v := strings.TrimSpace(u.GetAnnotations()[RestoreAnnotation])
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return v, false
	}
	last, set := field(u, "status", "lastRestoredSerial")
	return v, !set || last != n
}

// adopts is spec.adoptRetainedState.
func adopts(u *unstructured.Unstructured) bool {
	b, _ := boolean(u, "spec", "adoptRetainedState")
	return b
}

// isProvisioned is status.initialization.provisioned.
func isProvisioned(u *unstructured.Unstructured) bool {
	b, _ := boolean(u, "status", "initialization", "provisioned")
	return b
}

func hasFinalizer(u *unstructured.Unstructured, f string) bool {
	for _, x := range u.GetFinalizers() {
		if x == f {
			return true
		}
	}
	return false
}

// withJobs says, of a deletion of the Lease, that it waits for the
// object's active Job.
func withJobs(g Gate, env Env) Gate {
	if g.Deletes != nil && env.ActiveJob != "" {
		d := *g.Deletes
		d.When = "once Job " + env.ActiveJob + " finishes: " + d.When
		g.Deletes = &d
	}
	return g
}

// uncertain makes g depend on what could not be read: a Job that would
// start may not (Unsure), a gate that would stop every Job may not, and a
// deletion of the Lease is not certain. prefix says what is unknown and
// ends with the case in which g holds ("…; otherwise").
func uncertain(g Gate, prefix string) Gate {
	out := g
	if g.State == Open {
		out.State = Unsure
		out.Reason = prefix + " " + nextOr(g.Next, "its next Job") + " force-unlocks the lock"
	} else {
		out.State = Unsure
		out.Reason = prefix + " " + g.Reason
	}
	out.Quiet, out.BeforeLockCheck = false, false
	if g.Deletes != nil {
		d := *g.Deletes
		d.Certain = false
		d.Why += "; not certain: " + prefix + " the above"
		out.Deletes = &d
	}
	return out
}

// whyOr is why something could not be read, "not read" when the caller
// gave no reason (it did not read it at all).
func whyOr(why string) string {
	if why == "" {
		return "not read"
	}
	return why
}

// either is g or another outcome that starts no Job and deletes no
// Lease, depending on what prefix says could not be known: Closed when g
// is, else as uncertain makes it; a deletion of the Lease is not certain.
func either(g Gate, prefix string) Gate {
	if g.State != Closed {
		return uncertain(g, prefix)
	}
	out := uncertain(g, prefix)
	out.State = Closed
	return out
}

func nextOr(next, def string) string {
	if next == "" {
		return def
	}
	return next
}

func preamble(g Gate) Gate {
	g.Quiet, g.BeforeLockCheck = true, true
	return g
}

func withNext(g Gate, op Op, next string) Gate {
	g.Next, g.NextOp = next, op
	return g
}

// Op is the kind of Job a gate names next.
type Op string

// The kinds of Job a gate names next.
const (
	OpDestroy Op = "destroy"
	OpRestore Op = "restore"
	// OpRefresh is a drift, membership, health-check or post-apply
	// refresh Job: CAPTF runs each with the pinned image and writes its
	// outcome on DriftJobSucceeded.
	OpRefresh Op = "refresh"
)

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
