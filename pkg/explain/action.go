package explain

import (
	"fmt"
	"strings"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// captfLockID is the ID CAPTF's controller takes for the lock
// (inspect.CAPTFID), as prose names it (inspect.Named). What reads the ID
// itself (FlagID, TriedText) takes inspect.CAPTFID.
func captfLockID(l inspect.Lease) string { return inspect.Named(inspect.CAPTFID(l)) }

// controllerAction is what CAPTF's controller does next, by its own
// rules (CAPTF v0.1.x: bookkeeping.go checkLock, locks/stale.go Check,
// run.go startJob, reconcile.go run, retain.go, cleanup.go, preamble.go;
// docs/how-it-decides.md names the commits). It claims nothing the
// decision and the gates do not support: the case is Classify's, the
// gate's reason its evidence.
func controllerAction(r inspect.Result, active *v1alpha1.ActiveJob, gate *jobgate.Gate) string {
	l, o, d := r.Facts.Lease, r.Facts.Owner, r.Decision
	first := ""
	if active != nil {
		first = "Job " + active.Name + " is active, so the controller checks the lock only after it finishes. "
	}
	deletes := ""
	if x := d.DeletesLease; x != nil {
		deletes = " " + deletionText(x)
		if x.Path != jobgate.PathOrphanSweep {
			// The sweep is the manager's, for no object.
			deletes += " " + reconciled(r)
		}
	}
	switch d.Verdict {
	case v1alpha1.Unlocked:
		return "Nothing: the lock is free."
	case v1alpha1.Live:
		return first + fmt.Sprintf("Nothing: the object's own runner pod holds the lock. CAPTF creates no Job of %s until its run lease %s is free, which it is only once every pod of that pod's Job has ended (the object waits: WaitingForRunLease). Once the pod has ended the lock is stale, and the next Job CAPTF starts runs init and then force-unlock -force %s first. Only past the run lease's backstop (the Job's activeDeadlineSeconds plus 15 minutes) could a Job start while the pod still runs; it would wait lockTimeoutSeconds for the lock, then fail.", o.Ref, inspect.RunLeaseName(l.Suffix), captfLockID(l)) + deletes
	case v1alpha1.Stale:
		unlock := fmt.Sprintf("the next Job it creates for %s, for any op, runs init and then force-unlock -force %s first; at that Job's creation CAPTF emits a Warning event ForceUnlocked and adds 1 to captf_lock_force_unlocks_total (alert CAPTFForceUnlocks)", o.Ref, captfLockID(l))
		switch d.StaleCase {
		case inspect.StaleIDMismatch:
			if inspect.MismatchHidden(l) {
				return first + fmt.Sprintf("Every Job it creates for %s runs force-unlock of the lock info's ID %s; the backend compares holderIdentity %s: %s. Each of these Jobs emits another ForceUnlocked event and adds to captf_lock_force_unlocks_total, so the CAPTFForceUnlocks alert keeps firing. It never clears through a Job.", o.Ref, inspect.Named(l.Info.ID), inspect.Named(l.ID), inspect.MismatchText(l)) + deletes
			}
			return first + fmt.Sprintf("Every Job it creates for %s runs force-unlock of the lock info's ID %s; the backend compares holderIdentity %s, answers \"does not match existing lock\", the runner counts that as success, the lock stays and the Job fails waiting for it. Each of these Jobs emits another ForceUnlocked event and adds to captf_lock_force_unlocks_total, so the CAPTFForceUnlocks alert keeps firing. It never clears through a Job.", o.Ref, inspect.Named(l.Info.ID), inspect.Named(l.ID)) + deletes
		case inspect.StaleRuntimeInfo:
			return first + fmt.Sprintf("Every Job it creates for %s runs init and then force-unlock -force %s; terraform and OpenTofu decode the whole lock info before they compare IDs and fail (%v), which CAPTF's runner does not accept, so the Job fails and the lock stays. Each of these Jobs emits another ForceUnlocked event and adds to captf_lock_force_unlocks_total. It never clears through a Job: unlock it.", o.Ref, captfLockID(l), l.RuntimeInfoErr) + deletes
		case inspect.StaleNoState:
			_, why := r.Facts.Runtime.NoState(l.Suffix)
			return first + fmt.Sprintf("No Job clears it: %s. The Job CAPTF creates for %s runs init and then force-unlock -force %s, but %s.", why, o.Ref, captfLockID(l), inspect.NoStateText(r.Facts.Gate, r.Facts.Runtime)) + deletes
		case inspect.StaleFlagID:
			return first + fmt.Sprintf("Every Job it creates for %s runs init and then force-unlock -force %s: %s. Each of these Jobs emits another ForceUnlocked event and adds to captf_lock_force_unlocks_total. It never clears through a Job: unlock it.", o.Ref, captfLockID(l), inspect.FlagID(inspect.CAPTFID(l))) + deletes
		case inspect.StaleUnreadableState:
			return first + fmt.Sprintf("No Job clears it. The Job CAPTF creates for %s is the restore asked for, which runs init and then force-unlock -force %s, but %s.", o.Ref, captfLockID(l), inspect.UnreadableStateText(r.Facts.Runtime.UnreadableState(r.Facts.Gate.NextOp), r.Facts.Runtime)) + deletes
		case inspect.StaleRelabeled:
			return first + fmt.Sprintf("Whether a Job clears it depends on the runtime in the image: the Job CAPTF creates for %s runs init and then force-unlock -force %s, but %s. Unlock it unless you know the image holds OpenTofu.", o.Ref, captfLockID(l), inspect.RelabeledText(r.Facts.Runtime.Relabeled())) + deletes
		case inspect.StaleChunked:
			if gap := r.Facts.Runtime.ChunkGap(l.Suffix); gap != "" {
				return first + fmt.Sprintf("Whether a Job clears it depends on the runtime in the image: the Job CAPTF creates for %s runs init and then force-unlock -force %s, but %s. Unlock it unless you know the image holds OpenTofu and the base Secret holds the whole state.", o.Ref, captfLockID(l), inspect.ChunkGapText(gap)) + deletes
			}
			return first + fmt.Sprintf("Whether a Job clears it depends on the runtime in the image: the Job CAPTF creates for %s runs init and then force-unlock -force %s, but %s. Unlock it unless you know the image holds Terraform.", o.Ref, captfLockID(l), inspect.ChunkedText(r.Facts.Runtime.Chunked(l.Suffix))) + deletes
		case inspect.StaleNoSteps:
			return first + fmt.Sprintf("No Job clears it until the image runs: %s. Once a Job of %s runs its steps, it runs init and then force-unlock -force %s first.", r.Facts.Runtime.NoStepsText(r.Facts.Gate.NextOp), o.Ref, captfLockID(l)) + deletes
		case inspect.StaleTried:
			return first + fmt.Sprintf("No Job has cleared it: %s. The next Job CAPTF creates for %s runs init and then force-unlock -force %s first, as that one did. Unlock it once you know what stopped that Job.", inspect.TriedText(r.Facts.Runtime.Tried, inspect.CAPTFID(l)), o.Ref, captfLockID(l)) + deletes
		case inspect.StaleCheckFails:
			return first + fmt.Sprintf("No Job: CAPTF's lock check GETs pod %s to tell whether it is gone, and client-go refuses that name (%s) before sending any request, so the check fails with an error that is not NotFound. Every reconcile of %s that reaches it ends there and is retried with backoff: no Job starts, so nothing force-unlocks the lock, no StateReadable=False/StateLocked is set, and if the object is deleted no Retain or cleanup runs. The lock stays until someone clears it; kubectl captf unlock may.", inspect.Quoted(l.Host), inspect.RefusedName(l.Host), o.Ref) + deletes
		case inspect.StaleOwnerUnread:
			return first + fmt.Sprintf("If %s exists, %s; whether it exists could not be read.", o.Ref, unlock)
		case inspect.StaleOwnerGone:
			if deletes != "" {
				return fmt.Sprintf("No Job: %s no longer exists.", o.Ref) + deletes
			}
			return fmt.Sprintf("Nothing: %s no longer exists, so no controller will ever clear this lock.", o.Ref)
		case inspect.StaleClears:
			s := first + upper(unlock) + "."
			if w := r.Facts.Runtime.WaitText(); w != "" {
				s += " " + upper(w) + "."
			}
			if filtered(r) {
				s += " " + reconciled(r)
			}
			return s
		case inspect.StaleGateClosed:
			if deletes != "" {
				return first + "No Job: " + gateReason(r, gate) + "." + deletes
			}
			if g := r.Facts.Gate; g != nil && g.Releases {
				return first + "Nothing: " + gateReason(r, gate) + ". Once the object is gone no controller reads this lock: clear it by hand."
			}
			return first + "Nothing: " + gateReason(r, gate) + ". The lock stays until that changes or it is cleared by hand."
		case inspect.StaleGateUnsure:
			s := first + "If a Job starts, " + unlock + "."
			if why := gateReason(r, gate); why != "" {
				// An open gate has no reason: the doubt is below.
				s += " " + upper(why) + "."
			}
			if m := r.Facts.Runtime.MaybeNoState(); m != "" {
				s += " " + upper(m) + "."
			}
			if p := r.Facts.Runtime.PinnedText(r.Facts.Gate.NextOp); p != "" {
				s += " " + upper(p) + "."
			}
			if l := r.Facts.Runtime.StateLimitText(r.Facts.Gate.NextOp); l != "" {
				s += " " + upper(l) + "."
			}
			if r.Facts.Runtime.MaybeNoBase() {
				s += " " + upper(inspect.NoBaseText) + "."
			}
			return s + deletes
		default: // inspect.StaleGatesUnread
			return first + "If a Job starts, " + unlock + "; whether one will could not be read."
		}
	}
	// Foreign or Unknown: the case Classify decided.
	stateLocked := "It never unlocks it through a Job. A reconcile that reads the state sets StateReadable=False/StateLocked (as it turns so: a Warning event StateLocked, captf_state_read_errors_total{reason=\"locked\"}, alert CAPTFStateUnreadable). Every Job fails."
	if gate != nil && gate.State == jobgate.Closed {
		stateLocked += " Now: " + gate.Reason + "."
	}
	switch d.Case {
	case inspect.CaseOtherWorkspace:
		if deletes != "" {
			return "No Job: CAPTF reads only workspace default." + deletes
		}
		return "Nothing: CAPTF reads only workspace default, so no controller reads this lock."
	case inspect.CaseEmptyID:
		if deletes != "" {
			return "No Job clears it: CAPTF treats an empty holderIdentity as no lock, so it sets no condition for it; any Job it starts finds the state locked and fails." + deletes
		}
		return "Nothing: CAPTF treats an empty holderIdentity as no lock, so it sets no condition for it; any Job it starts finds the state locked and fails."
	case inspect.CaseNoOwner:
		if deletes != "" {
			return "No Job: no CAPTF object owns this lock, so no controller reads it or sets a condition for it." + deletes
		}
		return "Nothing: no CAPTF object owns this lock, so no controller reads it or sets a condition for it."
	case inspect.CaseOwnerGone:
		if deletes != "" {
			return fmt.Sprintf("No Job: %s no longer exists, so no controller reads this lock.", o.Ref) + deletes
		}
		return fmt.Sprintf("Nothing: %s no longer exists, so no controller reads this lock.", o.Ref)
	case inspect.CaseOwnerUnread:
		return first + fmt.Sprintf("If %s exists: ", o.Ref) + stateLocked + " Whether it exists could not be read." + deletes
	}
	return first + stateLocked + deletes
}

// WatchFilterLabel is the label CAPTF's manager selects the objects it
// reconciles by when it runs with --watch-filter
// (predicates.ResourceHasFilterLabel in terraformcluster/setup.go
// SetupWithManager, at 16ca67d3711e1eb42cfbf3acd89c0d42f6970517).
const WatchFilterLabel = "cluster.x-k8s.io/watch-filter"

// reconciled is the assumption under every prediction of what CAPTF
// does: that its manager reconciles the object. A manager run with
// --namespace caches and reconciles one namespace only
// (internal/manager/cache.go CacheOptions), one run with --watch-filter
// only the objects labelled WatchFilterLabel with its value; the plugin
// reads neither flag. It is said with every deletion of the Lease, and
// with the force-unlock of the next Job where the object carries
// WatchFilterLabel (filtered), a sign that managers are split by it; the
// rest is in docs/how-it-decides.md, so that explain stays one screen.
//
// r has an owner: only then does the plugin say that CAPTF acts.
func reconciled(r inspect.Result) string {
	s := "This assumes that CAPTF's manager reconciles the object (its --namespace and --watch-filter decide which it does"
	if r.Object != nil {
		if v, ok := r.Object.GetLabels()[WatchFilterLabel]; ok {
			s += "; this one carries " + WatchFilterLabel + "=" + v
		}
	}
	return s + ")."
}

// filtered is whether the object carries WatchFilterLabel.
func filtered(r inspect.Result) bool {
	if r.Object == nil {
		return false
	}
	_, ok := r.Object.GetLabels()[WatchFilterLabel]
	return ok
}

// gateReason is the gate Classify decided with.
func gateReason(r inspect.Result, gate *jobgate.Gate) string {
	if g := r.Facts.Gate; g != nil {
		return g.Reason
	}
	if gate != nil {
		return gate.Reason
	}
	return "its gates could not be read"
}

// deletionText says that CAPTF deletes the Lease itself, when and why,
// and what that means for a holder still writing.
func deletionText(x *jobgate.Deletion) string {
	if !x.Certain {
		return fmt.Sprintf("CAPTF may delete this lock Lease itself, without a Job (%s): %s; %s. If it does, %s.", x.Path, x.When, x.Why, jobgate.HolderStillWriting)
	}
	return fmt.Sprintf("CAPTF deletes this lock Lease itself, without a Job and whoever holds it, %s (%s): %s. That ends the lock, but %s.", x.When, x.Path, x.Why, jobgate.HolderStillWriting)
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// disagreement compares the object's StateReadable condition with what
// CAPTF's own rules would write now, and says where they differ. CAPTF
// keeps StateRead while its own runner holds the lock and for an empty
// holderIdentity, and writes nothing while a Job of the object is active
// (one it counts: its controller is the object), while the object is
// paused, while its reconcile stops before reading the state, or while
// its lock check fails: none of those is a disagreement, though they
// leave an old condition standing.
func disagreement(x *v1alpha1.Explanation, r *inspect.Result, ref *object.Ref, gate *jobgate.Gate) string {
	c := x.Context.StateReadable
	if c == nil || ref == nil {
		return ""
	}
	heldForCAPTF := r != nil && r.Facts.Lease.Held && r.Facts.Lease.ID != ""
	quiet := x.Context.ActiveJob != nil || (gate != nil && gate.Quiet) || (r != nil && r.Decision.StaleCase == inspect.StaleCheckFails)
	// CAPTF sets StateLocked for a lock it reads and does not own: the
	// case Classify decided.
	foreign := r != nil && (r.Decision.Case == inspect.CaseStateLocked || r.Decision.Case == inspect.CaseOwnerUnread)
	var s string
	switch {
	case c.Reason == "StateLocked" && !heldForCAPTF:
		s = "The object's condition says StateLocked, but the lock is free now; CAPTF rewrites the condition at its next reconcile that reads the state."
	case c.Reason == "StateLocked" && !strings.Contains(c.Message, captfLockID(r.Facts.Lease)):
		s = fmt.Sprintf("The object's condition says StateLocked by another lock than the one held now (%s); it is rewritten at CAPTF's next reconcile that reads the state.", captfLockID(r.Facts.Lease))
	case (c.Reason == "StateRead" || c.Reason == "StateNotFound") && foreign && !quiet:
		s = fmt.Sprintf("The object's condition says %s, but a lock that is not its own runner's is held: CAPTF sets StateLocked at its next reconcile that reads the state.", c.Reason)
	default:
		return ""
	}
	if quiet {
		s += " A Job is active, the object is paused, its reconcile stops before reading the state or its lock check fails, so that reconcile waits."
	}
	return s
}
