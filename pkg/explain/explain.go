// Package explain says why a lock has its verdict, in the order CAPTF's
// controller checks it, what the controller does next and what an operator
// can do. It adds no rule of its own: the verdict and its steps come from
// inspect, as for every command.
package explain

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/advice"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// Explainer builds explanations from what the reading layer read
// (cluster.Reader.ReadExplained): it makes no request of its own.
type Explainer struct {
	// Advice builds the commands it suggests, with the connection flags of
	// this run.
	Advice advice.Builder
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Target is the lock to explain.
type Target struct {
	Namespace, Lease string
	// Object is the CAPTF object named, when one was.
	Object *object.Ref
	// Arg is the target in TYPE/NAME form, used in the advice.
	Arg string
}

// Explain explains the lock of snap (nil: its Lease does not exist), as
// read live with what surrounds it, and returns the read's warnings.
func (e *Explainer) Explain(t Target, snap *inspect.Snapshot, around inspect.Around) (*v1alpha1.Explanation, []string) {
	x := &v1alpha1.Explanation{ObjectMeta: metav1.ObjectMeta{Name: t.Lease, Namespace: t.Namespace}, Advice: []v1alpha1.Advice{}}
	x.SetTypeMeta()
	var r *inspect.Result
	var warnings []string
	switch {
	case snap == nil:
		e.noLease(x, t)
	default:
		res, _ := inspect.DecideLock(snap, t.Namespace, t.Lease)
		r, warnings = &res, snap.Warnings
		l := r.Lock()
		x.ObjectMeta, x.Object, x.Cluster, x.Lock, x.Holder = l.ObjectMeta, l.Object, l.Cluster, l.Lock, l.Holder
		x.Verdict, x.Reason, x.CAPTFClears, x.CAPTFDeletesLease = l.Verdict, l.Reason, l.CAPTFClears, l.CAPTFDeletesLease
		if j := r.ActiveJob; j != nil {
			start := j.StartTime
			x.Context.ActiveJob = &v1alpha1.ActiveJob{Name: j.Name, Operation: j.Operation, Attempt: j.Attempt, StartTime: &start, From: "jobs"}
		}
	}
	ref := t.Object
	if ref == nil && r != nil && r.Facts.Owner != nil {
		ref = &r.Facts.Owner.Ref
	}
	surroundings(x, ref, r, around)
	// The gates are those the verdict was decided with (ReadLock reads
	// the owner in full whenever it exists).
	var gate *jobgate.Gate
	if r != nil {
		gate = r.Facts.Gate
	}
	if r != nil {
		x.Steps = append([]v1alpha1.Step{activeStep(x.Context.ActiveJob), {Check: "Does the Lease exist?", Observed: "lease/" + t.Lease, Result: "yes"}}, r.Decision.Steps...)
		x.ControllerAction = controllerAction(*r, x.Context.ActiveJob, gate)
		x.Advice = e.advice(*r, t)
	}
	if x.Disagreement = disagreement(x, r, ref, gate); x.Disagreement != "" {
		// Clearing a Lease does not make CAPTF reconcile; the command that
		// does is advice like any other.
		x.Advice = append(x.Advice, advice.Run("the condition of the object is out of date until CAPTF reconciles it. To trigger that now:", e.Advice.Reconcile(ref.String(), ref.Namespace, e.now())))
	}
	if x.Cluster != "" {
		x.Advice = append(x.Advice, e.describeCluster(x.Cluster, t.Namespace))
	}
	x.Advice = e.Advice.Finish(x.Advice)
	return x, warnings
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

// advice lists the commands that fix or investigate the lock, each with
// the comment that says when to run it. Every unlock it prints names the
// current lock ID, Stale included: pasted against another lock, another
// cluster's say, it is refused. Comments hold no character a shell acts
// on: zsh runs a pasted "# ..." line as a command.
func (e *Explainer) advice(r inspect.Result, t Target) []v1alpha1.Advice {
	ns, b := t.Namespace, e.Advice
	withID := advice.Guard{ID: r.Facts.Lease.UnlockID(), IDGiven: true}
	switch r.Decision.Verdict {
	case v1alpha1.Unlocked:
		return []v1alpha1.Advice{}
	case v1alpha1.Stale:
		comment := ""
		switch r.Decision.StaleCase {
		case inspect.StaleClears:
			comment = "nothing is required, the next Job of the object clears it. To clear it now:"
		case inspect.StaleNoState, inspect.StaleRuntimeInfo, inspect.StaleIDMismatch, inspect.StaleFlagID:
			comment = "no Job of the controller clears this lock, clear it here and the next Job proceeds:"
			if r.Facts.Runtime.RestoreFailed {
				comment = "no Job of the controller clears this lock, clear it here, then ask for the restore again:"
			}
		case inspect.StaleUnreadableState:
			comment = "no Job of the controller clears this lock and the restore cannot read the state, clear it here, repair or remove the unreadable state Secrets, then ask for the restore again:"
		case inspect.StaleRelabeled:
			comment = "with a Terraform image no Job of the controller clears this lock, clear it here:"
		case inspect.StaleChunked:
			comment = "with an OpenTofu image and a state split across its chunks no Job of the controller clears this lock, clear it here:"
		case inspect.StaleTried:
			// What stopped that Job decides whether the next clears it.
			return []v1alpha1.Advice{
				advice.Run("a Job the controller created to force-unlock this lock failed with it still held, see why:", b.Kubectl("describe", "job", "-n", ns, r.Facts.Runtime.Tried.Name)),
				advice.Run("then clear it here:", b.Unlock(t.Arg, ns, withID, true, false)),
			}
		case inspect.StaleNoSteps:
			// Unlocking does not make an image run; once one does, that
			// Job force-unlocks the lock itself.
			comment = "fix the runner image or its pull secret, the first Job whose image runs clears this lock. To clear it now:"
		}
		return []v1alpha1.Advice{advice.Run(comment, b.Unlock(t.Arg, ns, withID, true, false))}
	case v1alpha1.Live:
		p := r.Facts.Pod.Name
		force := withID
		force.Force = true
		return []v1alpha1.Advice{
			advice.Run("the runner is alive: look at it rather than unlocking", b.Logs(ns, p)),
			advice.Run("", b.DescribePod(ns, p)),
			advice.Run("only if it is certainly not writing the state, naming the lock ID you saw:", b.Unlock(t.Arg, ns, force, true, false)),
		}
	}
	const careful = "a foreign holder may be mid-write: make sure the holder shown above has stopped, then:"
	var out []v1alpha1.Advice
	if p := r.Facts.Pod; p != nil && p.Exists {
		out = append(out, advice.Run(careful, b.DescribePod(ns, p.Name)))
		return append(out, advice.Run("", b.Unlock(t.Arg, ns, withID, true, false)))
	}
	return append(out, advice.Run(careful, b.Unlock(t.Arg, ns, withID, true, false)))
}

// describeCluster is the look at the lock's Cluster API Cluster: the
// clusterctl command, or, when this run's connection flags include one
// clusterctl cannot take, a note that says which, rather than a command
// that would read another cluster or as another user.
func (e *Explainer) describeCluster(name, namespace string) v1alpha1.Advice {
	argv, cannot := e.Advice.DescribeCluster(name, namespace)
	if argv == nil {
		return advice.Note("clusterctl describe cluster shows the Cluster this lock belongs to, but it cannot be given " + strings.Join(cannot, ", ") + " as this run was: run it against the same cluster and user yourself")
	}
	return advice.Run("to see the Cluster this lock belongs to, and its conditions, with clusterctl:", argv)
}

func (e *Explainer) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}
