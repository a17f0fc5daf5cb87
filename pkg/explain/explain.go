// Package explain says why a lock has its verdict, in the order CAPTF's
// controller checks it, what the controller does next and what an operator
// can do. It adds no rule of its own: the verdict and its steps come from
// inspect, as for every command.
package explain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/shell"
	"github.com/captf-io/kubectl-captf/pkg/unlock"
)

// Explainer builds explanations.
type Explainer struct {
	Inspector *inspect.Inspector
	Dynamic   dynamic.Interface
	Metadata  metadata.Interface
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Target is the lock to explain.
type Target struct {
	Namespace, Lease string
	// Object is the CAPTF object named, when one was.
	Object *object.Ref
	// Fetched is the object as already read (by argument resolution);
	// nil makes Explain read it when it needs it.
	Fetched *unstructured.Unstructured
	// Arg is the target in TYPE/NAME form, used in the advice.
	Arg string
}

// Explain reads the lock live, and its context, and explains it.
func (e *Explainer) Explain(ctx context.Context, t Target) (*v1alpha1.Explanation, []string, error) {
	x := &v1alpha1.Explanation{ObjectMeta: metav1.ObjectMeta{Name: t.Lease, Namespace: t.Namespace}, Advice: []string{}}
	x.SetTypeMeta()
	r, warnings, err := e.Inspector.Lock(ctx, t.Namespace, t.Lease, t.Fetched)
	var none *inspect.NoLeaseError
	switch {
	case errors.As(err, &none):
		e.noLease(x, t)
	case err != nil:
		return nil, nil, err
	default:
		l := r.Lock()
		x.ObjectMeta, x.Object, x.Lock, x.Holder = l.ObjectMeta, l.Object, l.Lock, l.Holder
		x.Verdict, x.Reason, x.CAPTFClears = l.Verdict, l.Reason, l.CAPTFClears
		if j := r.ActiveJob; j != nil {
			start := j.StartTime
			x.Context.ActiveJob = &v1alpha1.ActiveJob{Name: j.Name, Operation: j.Operation, Attempt: j.Attempt, StartTime: &start, From: "jobs"}
		}
	}
	ref := t.Object
	if ref == nil && r != nil && r.Facts.Owner != nil {
		ref = &r.Facts.Owner.Ref
	}
	obj := e.readContext(ctx, x, t, ref, r)
	var gate *jobgate.Gate
	if obj != nil {
		g := jobgate.Of(ref.Kind.Name, obj)
		gate = &g
	}
	if r != nil {
		x.Steps = append([]v1alpha1.Step{activeStep(x.Context.ActiveJob), {Check: "Does the Lease exist?", Observed: "lease/" + t.Lease, Result: "yes"}}, r.Decision.Steps...)
		x.ControllerAction = controllerAction(*r, x.Context.ActiveJob, gate)
		x.Advice = advice(*r, t)
	}
	if x.Disagreement = disagreement(x, r, ref, gate); x.Disagreement != "" {
		// Clearing a Lease does not make CAPTF reconcile; the command that
		// does is advice like any other, quoted and on a line of its own.
		x.Advice = append(x.Advice, "# the object's condition is out of date until CAPTF reconciles it; to trigger that now:")
		addCommand(&x.Advice, unlock.ReconcileCommand(ref.String(), ref.Namespace, e.now()))
	}
	return x, warnings, nil
}

// noLease explains a lock whose Lease does not exist: nothing holds it.
func (e *Explainer) noLease(x *v1alpha1.Explanation, t Target) {
	x.Verdict, x.Reason = v1alpha1.Unlocked, "the lock Lease does not exist: the state was never locked here"
	x.Steps = []v1alpha1.Step{{Check: "Does the Lease exist?", Observed: "lease/" + t.Lease + " is not found", Result: "not held"}}
	x.ControllerAction = "Nothing: there is no lock."
	if t.Object != nil {
		x.Object = &v1alpha1.ObjectRef{Kind: t.Object.Kind.Name, Name: t.Object.Name}
	}
}

func activeStep(job *v1alpha1.ActiveJob) v1alpha1.Step {
	if job == nil {
		return v1alpha1.Step{Check: "Is a Job of the object active?", Observed: "no active runner Job", Result: "the controller checks the lock"}
	}
	return v1alpha1.Step{Check: "Is a Job of the object active?", Observed: fmt.Sprintf("Job %s is active (op %s, attempt %d)", job.Name, job.Operation, job.Attempt), Result: "the controller defers the lock check until it finishes"}
}

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

// advice lists the commands that fix or investigate the lock, each built
// as an argv and quoted by package shell, and comments starting "# ".
func advice(r inspect.Result, t Target) []string {
	ns := t.Namespace
	l := r.Facts.Lease
	id := unlock.CurrentID(l)
	var out []string
	add := func(c shell.Command) { addCommand(&out, c) }
	switch r.Decision.Verdict {
	case v1alpha1.Unlocked:
		return []string{}
	case v1alpha1.Stale:
		if r.Decision.CAPTFClears {
			out = append(out, "# nothing is required: the object's next Job clears it; to clear it now:")
		}
		add(unlock.Command(t.Arg, ns, unlock.Guard{}, true, false))
		return out
	case v1alpha1.Live:
		p := r.Facts.Pod.Name
		out = append(out, "# the runner is alive: look at it rather than unlocking")
		add(shell.Command{"kubectl", "logs", "-n", ns, p})
		add(shell.Command{"kubectl", "describe", "pod", "-n", ns, p})
		out = append(out, "# only if it is certainly not writing the state, naming the lock ID you saw:")
		add(unlock.Command(t.Arg, ns, unlock.Guard{Force: true, ID: id, IDGiven: true}, true, false))
		return out
	}
	out = append(out, "# a foreign holder may be mid-write: make sure the holder shown above has stopped, then:")
	if p := r.Facts.Pod; p != nil && p.Exists {
		add(shell.Command{"kubectl", "describe", "pod", "-n", ns, p.Name})
	}
	add(unlock.Command(t.Arg, ns, unlock.Guard{ID: id, IDGiven: true}, true, false))
	return out
}

// addCommand appends a command to advice, quoted by package shell, or a
// comment saying why it cannot be shown.
func addCommand(advice *[]string, c shell.Command) {
	if s := c.String(); s != "" {
		*advice = append(*advice, s)
		return
	}
	_, err := c.Words()
	*advice = append(*advice, "# no command printed: "+err.Error())
}

func (e *Explainer) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
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
