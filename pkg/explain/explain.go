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
	"github.com/captf-io/kubectl-captf/pkg/object"
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
	r, warnings, err := e.Inspector.Lock(ctx, t.Namespace, t.Lease)
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
		x.Context.ActiveJob = r.ActiveJob
	}
	ref := t.Object
	if ref == nil && r != nil && r.Facts.Owner != nil {
		ref = &r.Facts.Owner.Ref
	}
	e.readContext(ctx, x, t, ref, r)
	if r != nil {
		x.Steps = append([]v1alpha1.Step{activeStep(x.Context.ActiveJob), {Check: "Does the Lease exist?", Observed: "lease/" + t.Lease, Result: "yes"}}, r.Decision.Steps...)
		x.ControllerAction = controllerAction(*r, x.Context.ActiveJob)
		x.Advice = advice(*r, t, e.now())
	}
	x.Disagreement = disagreement(x, t, ref, e.now())
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

func activeStep(job string) v1alpha1.Step {
	if job == "" {
		return v1alpha1.Step{Check: "Is a Job of the object active?", Observed: "no active runner Job", Result: "the controller checks the lock"}
	}
	return v1alpha1.Step{Check: "Is a Job of the object active?", Observed: "Job " + job + " is active", Result: "the controller defers the lock check until it finishes"}
}

// controllerAction is what CAPTF's controller does next (reference §4).
func controllerAction(r inspect.Result, activeJob string) string {
	l, o := r.Facts.Lease, r.Facts.Owner
	switch r.Decision.Verdict {
	case v1alpha1.Unlocked:
		return "Nothing: the lock is free."
	case v1alpha1.Live:
		return "Nothing: the object's own runner holds the lock. A next Job would wait lockTimeoutSeconds (default 300 s) for it."
	case v1alpha1.Stale:
		switch {
		case l.Info.ID != "" && l.Info.ID != l.ID:
			return fmt.Sprintf("Its next Job runs force-unlock of the lock info's ID %s; the backend compares holderIdentity %s, answers \"does not match existing lock\", the runner counts that as success, and the lock stays: it never clears by itself.", l.Info.ID, l.ID)
		case o.Exists == nil:
			return fmt.Sprintf("If %s exists, its next Job clears the lock; whether it exists could not be read.", o.Ref)
		case !*o.Exists:
			return fmt.Sprintf("Nothing: %s no longer exists, so no controller will ever clear this lock.", o.Ref)
		}
		s := fmt.Sprintf("The next Job it creates for %s, for any op, runs init then force-unlock -force %s first, and it emits a Warning event ForceUnlocked. If no Job is due (an apply waiting for approval), the lock stays.", o.Ref, l.ID)
		if activeJob != "" {
			s = "Job " + activeJob + " is active, so the controller checks the lock when it finishes. " + s
		}
		return s
	}
	// Foreign or Unknown.
	return "It never unlocks it. It sets StateReadable=False with reason StateLocked and emits a StateLocked event; Jobs keep starting, and every one waits lockTimeoutSeconds (default 300 s) for the lock, then fails and backs off."
}

// advice lists the commands that fix or investigate the lock.
func advice(r inspect.Result, t Target, now time.Time) []string {
	ns := t.Namespace
	l := r.Facts.Lease
	base := fmt.Sprintf("kubectl captf unlock %s -n %s", t.Arg, ns)
	switch r.Decision.Verdict {
	case v1alpha1.Unlocked:
		return []string{}
	case v1alpha1.Stale:
		if r.Decision.CAPTFClears {
			return []string{
				"# nothing is required: the object's next Job clears it; to clear it now:",
				base + " --confirm",
			}
		}
		return []string{base + " --confirm"}
	case v1alpha1.Live:
		p := r.Facts.Pod.Name
		return []string{
			"# the runner is alive: look at it rather than unlocking",
			fmt.Sprintf("kubectl logs -n %s %s", ns, p),
			fmt.Sprintf("kubectl describe pod -n %s %s", ns, p),
			"# only if it is certainly not writing the state:",
			base + " --force --confirm",
		}
	}
	out := []string{"# a foreign holder may be mid-write: make sure " + holderName(l) + " has stopped, then:"}
	if p := r.Facts.Pod; p != nil && p.Exists {
		out = append(out, fmt.Sprintf("kubectl describe pod -n %s %s", ns, p.Name))
	}
	return append(out, fmt.Sprintf("%s --id %s --confirm", base, unlock.QuoteID(unlock.CurrentID(l))))
}

func holderName(l inspect.Lease) string {
	if l.Info != nil && l.Info.Who != "" {
		return l.Info.Who
	}
	return "the holder"
}

func (e *Explainer) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// disagreement compares the object's StateReadable condition with what is
// observed now, and says where they contradict each other.
func disagreement(x *v1alpha1.Explanation, t Target, ref *object.Ref, now time.Time) string {
	c := x.Context.StateReadable
	if c == nil || ref == nil {
		return ""
	}
	held := x.Lock != nil
	var s string
	switch {
	case c.Reason == "StateLocked" && !held:
		s = "The object's condition says StateLocked, but the lock is free now."
	case c.Reason == "StateLocked" && x.Lock.ID != "" && !strings.Contains(c.Message, x.Lock.ID) && (x.Lock.InfoID == "" || !strings.Contains(c.Message, x.Lock.InfoID)):
		s = fmt.Sprintf("The object's condition says StateLocked by another lock than the one held now (%s).", x.Lock.ID)
	case c.Reason == "StateRead" && held:
		s = "The object's condition says StateRead, but a lock is held now."
	default:
		return ""
	}
	return s + fmt.Sprintf(" The controller's view updates at its next reconcile, which clearing a Lease does not trigger; to trigger one: kubectl annotate %s -n %s %s=%s --overwrite",
		ref, ref.Namespace, unlock.ReconcileAnnotation, now.UTC().Format(time.RFC3339))
}
