// Package unlock clears a Terraform/OpenTofu state lock the way the
// runtimes' own Unlock does, behind guards that refuse a live holder and
// any holder CAPTF would not call stale unless the operator names the
// lock ID they saw, and with a compare-and-swap write that can never clear
// a lock that changed since it was read.
package unlock

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/captf-io/kubectl-captf/pkg/advice"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
)

// Guard is what the operator offered to get past the guards, in the shape
// of the flags an unlock command carries. Force clears a lock whose holder
// is one of the object's own runner pods and still alive; it is accepted
// only with the current ID. ID, when IDGiven, must equal the current lock
// ID: the proof `terraform force-unlock` asks for that the holder cleared
// is the one the operator looked at. It is needed for a Live (with Force),
// Foreign or Unknown holder, and checked against any holder.
type Guard = advice.Guard

// Decision is what the guards make of a lock.
type Decision struct {
	// Action is ActionUnlocked for "may go ahead", AlreadyUnlocked or Refused.
	Action  v1alpha1.Action
	Message string
	// Next are the guard flags that would get past a refusal, with the
	// current ID; nil when no flag should (the ID the operator gave no
	// longer matches: they must look again first).
	Next *Guard
}

// Check decides whether the guards let a lock be cleared.
func Check(r inspect.Result, g Guard, now time.Time) Decision {
	l, d := r.Facts.Lease, r.Decision
	if d.Verdict == v1alpha1.Unlocked {
		return Decision{Action: v1alpha1.AlreadyUnlocked, Message: "the lock is already free"}
	}
	id := l.UnlockID()
	if g.IDGiven && g.ID != id {
		return Decision{Action: v1alpha1.Refused, Message: fmt.Sprintf("the lock ID given (%s) is not the current one (%s): the lock is now held by %s (%s); look at it again before clearing it", inspect.Quoted(g.ID), inspect.Quoted(id), Holder(l, now), d.Verdict)}
	}
	switch d.Verdict {
	case v1alpha1.Stale:
		return Decision{Action: v1alpha1.ActionUnlocked, Message: "the lock is stale: " + d.Reason}
	case v1alpha1.Live:
		p := r.Facts.Pod
		withID := &Guard{Force: true, ID: id, IDGiven: true}
		switch {
		case g.Force && g.IDGiven:
			return Decision{Action: v1alpha1.ActionUnlocked, Message: fmt.Sprintf("--force with the current lock ID: clearing a lock whose holder pod %s is %s; the two runs may now write the same state", p.Name, p.State())}
		case g.Force:
			return Decision{Action: v1alpha1.Refused, Message: fmt.Sprintf("--force needs --id with the current lock ID, as terraform force-unlock does, so that only the holder you looked at is cleared: holder pod %s is %s. The command below names it", p.Name, p.State()), Next: withID}
		}
		return Decision{Action: v1alpha1.Refused, Message: fmt.Sprintf("holder pod %s is %s: clearing its lock lets two runs write the same state; look at the pod first. Only if it is certainly not writing, run the last command below (--force with the current lock ID)", p.Name, p.State()), Next: withID}
	}
	// Foreign or Unknown.
	if g.IDGiven {
		return Decision{Action: v1alpha1.ActionUnlocked, Message: fmt.Sprintf("--id matches the lock held by %s", Holder(l, now))}
	}
	return Decision{Action: v1alpha1.Refused, Message: fmt.Sprintf("the lock is %s: %s. It is held by %s. A foreign lock may be mid-write (a workstation running terraform state rm, say), and nobody here can know. Once the holder is gone, run the last command below: it names the current lock ID with --id", d.Verdict, d.Reason, Holder(l, now)), Next: &Guard{ID: id, IDGiven: true}}
}

// Holder describes who holds a lock, with its operation and age.
func Holder(l inspect.Lease, now time.Time) string {
	if l.Info == nil {
		return fmt.Sprintf("an unidentifiable holder (lock ID %s)", inspect.Quoted(l.UnlockID()))
	}
	s := fmt.Sprintf("%s (%s", inspect.Quoted(l.Info.Who), inspect.QuotedOperation(l.Info.Operation))
	if !l.Info.Created.IsZero() {
		s += ", for " + duration.HumanDuration(now.Sub(l.Info.Created))
	}
	return s + fmt.Sprintf(", lock ID %s)", inspect.Quoted(l.UnlockID()))
}
