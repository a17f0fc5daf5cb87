// Package unlock clears a Terraform/OpenTofu state lock the way the
// runtimes' own Unlock does, behind guards that refuse a live holder and
// any holder CAPTF would not call stale, and with a compare-and-swap write
// that can never clear a lock that changed since it was checked.
package unlock

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
)

// Guard is what the operator offered to get past the guards.
type Guard struct {
	// Force clears a lock whose holder is one of the object's own runner
	// pods and still alive.
	Force bool
	// ID, when IDGiven, must equal the current lock ID: the proof
	// `terraform force-unlock` asks for, needed for a Foreign or Unknown
	// holder, and checked against any holder.
	ID      string
	IDGiven bool
}

// CurrentID is the ID an operator must name: spec.holderIdentity, the one
// the backend compares, or the lock info's ID where holderIdentity is "".
func CurrentID(l inspect.Lease) string {
	if l.ID == "" && l.Info != nil {
		return l.Info.ID
	}
	return l.ID
}

// Check decides whether the guards let a lock be cleared. It returns the
// action (Unlocked meaning "may go ahead", AlreadyUnlocked, or Refused)
// and a message that says why.
func Check(r inspect.Result, g Guard, now time.Time) (v1alpha1.Action, string) {
	l, d := r.Facts.Lease, r.Decision
	if d.Verdict == v1alpha1.Unlocked {
		return v1alpha1.AlreadyUnlocked, "the lock is already free; nothing to do"
	}
	id := CurrentID(l)
	if g.IDGiven && g.ID != id {
		return v1alpha1.Refused, fmt.Sprintf("--id %q does not match the current lock ID %q: the lock is now held by %s", g.ID, id, Holder(l, now))
	}
	switch d.Verdict {
	case v1alpha1.Stale:
		return v1alpha1.ActionUnlocked, "the lock is stale: " + d.Reason
	case v1alpha1.Live:
		p := r.Facts.Pod
		if g.Force {
			return v1alpha1.ActionUnlocked, fmt.Sprintf("--force: clearing a lock whose holder pod %s is %s; the two runs may now write the same state", p.Name, p.State())
		}
		return v1alpha1.Refused, fmt.Sprintf("holder pod %s is %s: clearing its lock lets two runs write the same state; look at the pod (kubectl logs -n %s %s), or pass --force to clear it anyway",
			p.Name, p.State(), l.Lease.Namespace, p.Name)
	}
	// Foreign or Unknown.
	if g.IDGiven {
		return v1alpha1.ActionUnlocked, fmt.Sprintf("--id matches the lock held by %s", Holder(l, now))
	}
	return v1alpha1.Refused, fmt.Sprintf("the lock is %s: %s. It is held by %s. A foreign lock may be mid-write: a lock held from a workstation running `terraform state rm` could be mid-write, and nobody here can know. Once the holder is gone, pass --id %s to clear it",
		d.Verdict, d.Reason, Holder(l, now), QuoteID(id))
}

// Holder describes who holds a lock, with its operation and age.
func Holder(l inspect.Lease, now time.Time) string {
	if l.Info == nil {
		return fmt.Sprintf("an unidentifiable holder (lock ID %q)", l.ID)
	}
	s := fmt.Sprintf("%q (%s", l.Info.Who, l.Info.Operation)
	if !l.Info.Created.IsZero() {
		s += ", for " + duration.HumanDuration(now.Sub(l.Info.Created))
	}
	return s + fmt.Sprintf(", lock ID %q)", l.ID)
}

// QuoteID quotes a lock ID for a shell only when it needs it (an empty
// one), for the commands printed as advice.
func QuoteID(id string) string {
	if id == "" {
		return `""`
	}
	return id
}
