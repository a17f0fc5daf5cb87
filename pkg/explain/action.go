package explain

import (
	"fmt"
	"strings"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// captfLockID is the ID CAPTF's controller takes for the lock: the lock
// info's ID where it has one, else holderIdentity.
func captfLockID(l inspect.Lease) string {
	if l.Info != nil && l.Info.ID != "" {
		return l.Info.ID
	}
	return l.ID
}

// controllerAction is what CAPTF's controller does next, by its own
// rules (CAPTF v0.1.x: bookkeeping.go checkLock, run.go startJob,
// reconcile.go). It claims nothing the decision and the gates do not
// support.
func controllerAction(r inspect.Result, active *v1alpha1.ActiveJob, gate *jobgate.Gate) string {
	l, o, d := r.Facts.Lease, r.Facts.Owner, r.Decision
	first := ""
	if active != nil {
		first = "Job " + active.Name + " is active, so the controller checks the lock only after it finishes. "
	}
	switch d.Verdict {
	case v1alpha1.Unlocked:
		return "Nothing: the lock is free."
	case v1alpha1.Live:
		return first + "Nothing: the object's own runner pod holds the lock. A next Job would wait lockTimeoutSeconds (default 300 s) for it, then fail."
	case v1alpha1.Stale:
		unlock := fmt.Sprintf("the next Job it creates for %s, for any op, runs init and then force-unlock -force %s first; at that Job's creation CAPTF emits a Warning event ForceUnlocked and adds 1 to captf_lock_force_unlocks_total (alert CAPTFForceUnlocks)", o.Ref, captfLockID(l))
		// Classify decided the case; the gate's reason is its evidence.
		switch d.StaleCase {
		case inspect.StaleIDMismatch:
			return first + fmt.Sprintf("Every Job it creates for %s runs force-unlock of the lock info's ID %s; the backend compares holderIdentity %s, answers \"does not match existing lock\", the runner counts that as success, the lock stays and the Job fails waiting for it. Each of these Jobs emits another ForceUnlocked event and adds to captf_lock_force_unlocks_total, so the CAPTFForceUnlocks alert keeps firing. It never clears by itself.", o.Ref, l.Info.ID, l.ID)
		case inspect.StaleOwnerUnread:
			return first + fmt.Sprintf("If %s exists, %s; whether it exists could not be read.", o.Ref, unlock)
		case inspect.StaleOwnerGone:
			return fmt.Sprintf("Nothing: %s no longer exists, so no controller will ever clear this lock.", o.Ref)
		case inspect.StaleClears:
			return first + upper(unlock) + "."
		case inspect.StaleGateClosed:
			return first + "Nothing: " + r.Facts.Gate.Reason + ". The lock stays until that changes or it is cleared by hand."
		case inspect.StaleGateUnsure:
			return first + "If a Job starts, " + unlock + ". " + upper(r.Facts.Gate.Reason) + "."
		default: // inspect.StaleGatesUnread
			return first + "If a Job starts, " + unlock + "; whether one will could not be read."
		}
	}
	// Foreign or Unknown.
	switch {
	case l.Workspace != object.DefaultWorkspace:
		return "Nothing: CAPTF reads only workspace default, so no controller reads this lock."
	case l.ID == "":
		return "Nothing: CAPTF treats an empty holderIdentity as no lock, so it sets no condition and keeps starting Jobs; each runtime sees the state locked by an empty ID, waits lockTimeoutSeconds (default 300 s) and fails."
	case o == nil:
		return "Nothing: no CAPTF object owns this lock, so no controller reads it or sets a condition for it."
	case o.Exists != nil && !*o.Exists:
		return fmt.Sprintf("Nothing: %s no longer exists, so no controller reads this lock.", o.Ref)
	}
	s := first + "It never unlocks it. When it reconciles with no Job active, the object not paused and the state read, it sets StateReadable=False/StateLocked and a Warning event StateLocked, counted in captf_state_read_errors_total{reason=\"locked\"} (alert CAPTFStateUnreadable); every Job fails."
	if gate != nil && gate.State == jobgate.Closed {
		s += " Now: " + gate.Reason + "."
	}
	return s
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
// holderIdentity, and writes nothing while a Job is active, while the
// object is paused or while its reconcile stops before reading the state:
// none of those is a disagreement, though the last two leave an old
// condition standing.
func disagreement(x *v1alpha1.Explanation, r *inspect.Result, ref *object.Ref, gate *jobgate.Gate) string {
	c := x.Context.StateReadable
	if c == nil || ref == nil {
		return ""
	}
	heldForCAPTF := r != nil && r.Facts.Lease.Held && r.Facts.Lease.ID != ""
	quiet := x.Context.ActiveJob != nil || (gate != nil && gate.Quiet)
	foreign := heldForCAPTF && (x.Verdict == v1alpha1.Foreign || x.Verdict == v1alpha1.Unknown) && r.Facts.Lease.Workspace == object.DefaultWorkspace
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
		s += " A Job is active, the object is paused or its reconcile stops before reading the state, so that reconcile waits."
	}
	return s
}
