package unlock

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
)

// Unlocker clears locks.
type Unlocker struct {
	Inspector *inspect.Inspector
	Client    kubernetes.Interface
	// Dynamic patches the object when a reconcile is asked for.
	Dynamic dynamic.Interface
	// BeforeWrite, when set, runs between the read and the write. Tests
	// use it to change the Lease in that window.
	BeforeWrite func(ctx context.Context) error
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Options of one unlock.
type Options struct {
	Guard Guard
	// Confirm writes; without it nothing is written (a dry run).
	Confirm bool
	// Reconcile patches captf.io/unlocked-at onto the object after an
	// unlock, so its controller reconciles (it does not watch Leases).
	Reconcile bool
}

// ReconcileAnnotation is patched onto the object by Options.Reconcile.
const ReconcileAnnotation = "captf.io/unlocked-at"

// Outcome is the result of one unlock.
type Outcome struct {
	// Result is the lock as read just before the decision.
	Result inspect.Result
	Action v1alpha1.Action
	// Message says why, in one or two sentences.
	Message string
	DryRun  bool
	// Event is the recorded Event's name; Reconcile the annotation patched.
	Event, Reconcile string
	// Warnings are failures after a successful unlock (the Event, the
	// reconcile patch); they do not undo it.
	Warnings []string
}

// Unlock reads the lock live, classifies it again (an earlier listing is
// never trusted), checks the guards and, with Confirm, clears it with an
// update carrying the resourceVersion it read. A 409 Conflict means the
// lock changed since it was checked: nothing was written, and the outcome
// is Conflict, never a blind retry.
func (u *Unlocker) Unlock(ctx context.Context, namespace, lease string, o Options) (*Outcome, error) {
	r, _, err := u.Inspector.Lock(ctx, namespace, lease)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Result: *r, DryRun: !o.Confirm}
	out.Action, out.Message = Check(*r, o.Guard, u.now())
	if out.Action != v1alpha1.ActionUnlocked {
		return out, nil
	}
	if !o.Confirm {
		out.Action = v1alpha1.WouldUnlock
		return out, nil
	}
	if u.BeforeWrite != nil {
		if err := u.BeforeWrite(ctx); err != nil {
			return nil, err
		}
	}
	if err := u.write(ctx, r.Facts.Lease.Lease); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			out.Action = v1alpha1.Conflict
			out.Message = "the lock changed while unlocking, so nothing was written"
			return out, nil
		}
		return nil, err
	}
	out.Action = v1alpha1.ActionUnlocked
	u.after(ctx, out, o)
	return out, nil
}

// Change is the write Unlock makes: the runtimes' own Unlock, and nothing
// more. spec.holderIdentity becomes null (never ""), only the lock-info
// annotation goes, and the update carries the resourceVersion read.
func Change(l *coordinationv1.Lease) *v1alpha1.LeaseChange {
	c := &v1alpha1.LeaseChange{ResourceVersion: l.ResourceVersion, RemoveAnnotation: inspect.AnnotationLock}
	if l.Spec.HolderIdentity != nil {
		c.HolderIdentity = *l.Spec.HolderIdentity
	}
	return c
}

func (u *Unlocker) write(ctx context.Context, read *coordinationv1.Lease) error {
	l := read.DeepCopy()
	l.Spec.HolderIdentity = nil
	delete(l.Annotations, inspect.AnnotationLock)
	_, err := u.Client.CoordinationV1().Leases(l.Namespace).Update(ctx, l, metav1.UpdateOptions{})
	if err != nil && (apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)) {
		return fmt.Errorf("cannot update leases in namespace %q (unlocking needs update on leases): %w", l.Namespace, err)
	}
	return err
}

// after records the Event and, when asked, triggers a reconcile. Their
// failures are warnings: the lock is already clear.
func (u *Unlocker) after(ctx context.Context, out *Outcome, o Options) {
	name, err := u.recordEvent(ctx, out.Result)
	if err != nil {
		out.Warnings = append(out.Warnings, "the unlock was not recorded as an Event: "+err.Error())
	}
	out.Event = name
	if !o.Reconcile {
		return
	}
	owner := out.Result.Facts.Owner
	if owner == nil || owner.Exists == nil || !*owner.Exists {
		out.Warnings = append(out.Warnings, "--reconcile: no existing CAPTF object to annotate")
		return
	}
	if out.Reconcile, err = u.reconcile(ctx, owner); err != nil {
		out.Warnings = append(out.Warnings, "--reconcile: "+err.Error())
	}
}

func (u *Unlocker) now() time.Time {
	if u.Now != nil {
		return u.Now()
	}
	return time.Now()
}

// API renders the outcome in the captf.io/v1alpha1 output schema.
func (o *Outcome) API() v1alpha1.UnlockResult {
	l := o.Result.Lock()
	out := v1alpha1.UnlockResult{
		ObjectMeta: l.ObjectMeta, Object: l.Object, Verdict: l.Verdict, Reason: l.Reason,
		Lock: l.Lock, Holder: l.Holder, Action: o.Action, DryRun: o.DryRun, Message: o.Message,
		Event: o.Event, Reconcile: o.Reconcile, Warnings: o.Warnings,
	}
	out.SetTypeMeta()
	if o.Action == v1alpha1.ActionUnlocked || o.Action == v1alpha1.WouldUnlock {
		out.Change = Change(o.Result.Facts.Lease.Lease)
	}
	return out
}
