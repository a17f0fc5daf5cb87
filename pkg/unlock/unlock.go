package unlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/captf-io/kubectl-captf/pkg/advice"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/inspect/cluster"
)

// Unlocker clears locks.
type Unlocker struct {
	// Reader reads the lock again, live, before deciding and writing.
	Reader *cluster.Reader
	// decider decides the locks of decided, the snapshot UnlockIn was
	// last given.
	decider *inspect.Decider
	decided *inspect.Snapshot
	Client  kubernetes.Interface
	// Dynamic patches the object when a reconcile is asked for.
	Dynamic dynamic.Interface
	// Advice builds the commands an outcome suggests, with the connection
	// flags of this run.
	Advice advice.Builder
	// Impersonated is true when the run impersonates, as its resolved
	// client configuration says (--as, or as: on the kubeconfig's user):
	// the Event's note then says the user it names was impersonated.
	Impersonated bool
	// BeforeWrite, when set, runs between the read and the write. Tests
	// use it to change the Lease in that window.
	BeforeWrite func(ctx context.Context) error
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	userOnce sync.Once
	user     string
}

// Options of one unlock.
type Options struct {
	Guard Guard
	// Confirm writes; without it nothing is written (a dry run).
	Confirm bool
	// Reconcile patches captf.io/unlocked-at onto the object after an
	// unlock, so its controller reconciles (it does not watch Leases).
	Reconcile bool
	// Arg names the lock as the operator did (TYPE/NAME or lease/NAME),
	// for the commands an outcome suggests; lease/NAME when empty.
	Arg string
}

// Outcome is the result of one unlock.
type Outcome struct {
	// Namespace and Lease name the lock, whether or not its Lease exists.
	Namespace, Lease string
	// Result is the lock as read just before the decision; its Lease is
	// nil when there is no Lease (nothing to unlock) or it could not be read.
	Result inspect.Result
	Action v1alpha1.Action
	// Message says why, in one or two sentences.
	Message string
	DryRun  bool
	// Event is the recorded Event's name; Reconcile the annotation patched.
	Event, Reconcile string
	// Warnings are failures after a successful unlock (the Event, the
	// reconcile patch) and reads that failed without changing the
	// verdict; they do not undo it.
	Warnings []string
	// Commands are what to run next: the unlock with the flags the guards
	// ask for, a look at the holder, or a reconcile of the object.
	Commands []v1alpha1.Advice
	// WriteUnknown is set on a Failed outcome whose write may have been
	// applied all the same.
	WriteUnknown bool
	// Unrecorded is set on an unlock whose Event could not be created:
	// the lock is cleared, but nothing in the cluster says who cleared
	// it. Its Warnings say why.
	Unrecorded bool
}

// Failed is the outcome of a lock that could not be read or written.
func Failed(namespace, lease string, err error) *Outcome {
	var unknown *UnknownWriteError
	return &Outcome{Namespace: namespace, Lease: lease, Action: v1alpha1.Failed, Message: err.Error(), WriteUnknown: errors.As(err, &unknown)}
}

// UnknownWriteError is a write that failed without the server saying it
// refused it (a timeout, a dropped connection, a server error, Ctrl-C):
// the server may have applied it.
type UnknownWriteError struct{ Err error }

func (e *UnknownWriteError) Error() string {
	return e.Err.Error() + "; the write may have reached the server: look at the lock again"
}

func (e *UnknownWriteError) Unwrap() error { return e.Err }

// refusedForSure is whether the server answered the write with a 4xx
// status other than a timeout: then nothing was written.
func refusedForSure(err error) bool {
	var s apierrors.APIStatus
	if !errors.As(err, &s) {
		return false
	}
	code := s.Status().Code
	return code >= 400 && code < 500 && code != 408 && code != 429
}

// Unlock reads the lock live, classifies it again (an earlier listing is
// never trusted), checks the guards and, with Confirm, clears it with an
// update carrying the resourceVersion it read. A 409 Conflict means the
// lock changed since it was checked: nothing was written, and the outcome
// is Conflict, never a blind retry. A Lease that does not exist, or that
// vanished before the write, is AlreadyUnlocked: there is nothing to clear.
//
// The Lease write is the only write it makes: the caller reports it, then
// calls Record for the Event and the reconcile, so that each write is on
// record before the next one begins.
func (u *Unlocker) Unlock(ctx context.Context, namespace, lease string, o Options) (*Outcome, error) {
	return u.unlock(ctx, namespace, lease, o, func() (*inspect.Result, []string, string, error) {
		snap, err := u.Reader.ReadLock(ctx, namespace, lease)
		if err != nil {
			return nil, nil, "", err
		}
		r, ok := inspect.DecideLock(snap, namespace, lease)
		if !ok {
			return nil, nil, "", nil
		}
		return &r, snap.Warnings, "", nil
	})
}

// UnlockIn unlocks one lock of snap, a read of many (unlock --all-stale):
// a dry run decides from snap as it is, reading nothing; with Confirm, the
// Lease and the pod its holder names are read again, live (Refresh), and
// the lock is decided again from them and the rest of snap, just before
// the write, which carries the resourceVersion just read.
//
// The lock must be the one snap showed: a lock whose Lease was re-created
// or whose lock ID changed since (another holder took it, even one that is
// Stale too) is refused, so that --all-stale clears only what its listing
// decided. Each candidate is decided with one Decider of snap, built once.
func (u *Unlocker) UnlockIn(ctx context.Context, snap *inspect.Snapshot, namespace, lease string, o Options) (*Outcome, error) {
	if u.decider == nil || u.decided != snap {
		u.decider, u.decided = inspect.NewDecider(snap), snap
	}
	listed, ok := u.decider.Lock(snap, namespace, lease)
	return u.unlock(ctx, namespace, lease, o, func() (*inspect.Result, []string, string, error) {
		if !ok {
			return nil, nil, "", nil
		}
		if !o.Confirm {
			return &listed, nil, "", nil
		}
		fresh, err := u.Reader.Refresh(ctx, snap, namespace, lease)
		if err != nil {
			return nil, nil, "", err
		}
		r, ok := u.decider.Lock(fresh, namespace, lease)
		if !ok {
			return nil, nil, "", nil
		}
		changed := ""
		// A lock released since (by CAPTF's next Job, say) is no change
		// to refuse: the guard says it is already unlocked.
		if was, now := listed.Facts.Lease, r.Facts.Lease; now.Held && (was.UID != now.UID || was.ID != now.ID || was.Held != now.Held || infoID(was) != infoID(now)) {
			changed = fmt.Sprintf("the lock changed since it was listed (lock ID %s, now %s)", inspect.Quoted(was.UnlockID()), inspect.Quoted(now.UnlockID()))
		}
		return &r, fresh.Warnings, changed, nil
	})
}

// infoID is the lock info's ID, "" without lock info.
func infoID(l inspect.Lease) string {
	if l.Info == nil {
		return ""
	}
	return l.Info.ID
}

// unlock unlocks one lock, read by read.
// decide reads and decides the lock: nil without an error when it has no
// Lease.
func (u *Unlocker) unlock(ctx context.Context, namespace, lease string, o Options, decide func() (*inspect.Result, []string, string, error)) (*Outcome, error) {
	out := &Outcome{Namespace: namespace, Lease: lease, DryRun: !o.Confirm}
	if o.Arg == "" {
		o.Arg = "lease/" + lease
	}
	res, warnings, changed, err := decide()
	var none *inspect.NoLeaseError
	switch {
	case errors.As(err, &none):
		out.Action, out.Message = v1alpha1.AlreadyUnlocked, none.Error()+"; nothing to unlock"
		return out, nil
	case err != nil:
		return nil, err
	case res == nil:
		out.Action, out.Message = v1alpha1.AlreadyUnlocked, (&inspect.NoLeaseError{Namespace: namespace, Name: lease}).Error()+"; nothing to unlock"
		return out, nil
	}
	r := *res
	out.Result, out.Warnings = r, warnings
	if changed != "" {
		// Not what the listing decided on: look again.
		out.Action, out.Message = v1alpha1.Refused, changed+", so it is not cleared; nothing was written; look at it again"
		out.Commands = []v1alpha1.Advice{advice.Run("", u.Advice.Explain(o.Arg, namespace))}
		return out, nil
	}
	g := Check(r, o.Guard, u.now())
	out.Action, out.Message = g.Action, g.Message
	switch {
	case g.Action == v1alpha1.Refused:
		out.Commands = u.refusedCommands(r, g, o, namespace)
		return out, nil
	case g.Action != v1alpha1.ActionUnlocked:
		return out, nil
	case !o.Confirm:
		// The command names the lock ID it was computed for, Stale
		// included: pasted against another lock, it is refused.
		g := o.Guard
		g.ID, g.IDGiven = r.Facts.Lease.UnlockID(), true
		out.Action = v1alpha1.WouldUnlock
		out.Commands = u.Advice.Finish([]v1alpha1.Advice{advice.Run("", u.Advice.Unlock(o.Arg, namespace, g, true, o.Reconcile))})
		return out, nil
	}
	// Who asks is looked up before the write, so that the Event's note
	// cannot lack it because of something that happens after.
	u.whoami(ctx)
	if u.BeforeWrite != nil {
		if err := u.BeforeWrite(ctx); err != nil {
			return nil, err
		}
	}
	if ctx.Err() != nil {
		return nil, errInterruptedBeforeWrite
	}
	// Once sent, the write is not cancelled by an interrupt: a write
	// cancelled in flight may be applied with no answer, so that it is
	// neither reported nor recorded. writeTimeout bounds it instead.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	switch err := u.write(wctx, r.Source); {
	case apierrors.IsNotFound(err):
		out.Action, out.Message = v1alpha1.AlreadyUnlocked, "the Lease was deleted since it was read, so there is nothing to unlock; nothing was written"
		return out, nil
	case apierrors.IsConflict(err):
		out.Action = v1alpha1.Conflict
		out.Message = "the lock changed since it was read, so the server refused the write and nothing was written; look at it again"
		out.Commands = []v1alpha1.Advice{advice.Run("", u.Advice.Explain(o.Arg, namespace))}
		return out, nil
	case err != nil && refusedForSure(err):
		return nil, err
	case err != nil:
		return u.afterUnknownWrite(ctx, out, r.Facts.Lease, err)
	}
	out.Action = v1alpha1.ActionUnlocked
	return out, nil
}

// hasLockInfo is whether the Lease still carries the lock-info annotation,
// which the write removes.
func hasLockInfo(l *coordinationv1.Lease) bool {
	_, ok := l.Annotations[inspect.AnnotationLock]
	return ok
}

// afterUnknownWrite reads the Lease again when its write got no answer (a
// dropped connection, a timeout, a server error), so that a write the
// server applied is reported and recorded as an unlock. Every other
// answer of the read (unchanged, unreadable, re-created, changed by
// someone else) is an UnknownWriteError, after which no other write
// follows: an unchanged Lease does not prove that a request still in
// flight will not be applied. The read is bounded and, as the write was, not cancelled by
// an interrupt.
func (u *Unlocker) afterUnknownWrite(ctx context.Context, out *Outcome, was inspect.Lease, werr error) (*Outcome, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	snap, err := u.Reader.ReadLock(rctx, out.Namespace, out.Lease)
	if err != nil {
		return nil, &UnknownWriteError{Err: fmt.Errorf("%w (reading the Lease again failed: %v)", werr, err)}
	}
	r, ok := inspect.DecideLock(snap, out.Namespace, out.Lease)
	if !ok {
		return nil, &UnknownWriteError{Err: fmt.Errorf("%w (the Lease read again is gone)", werr)}
	}
	now := r.Facts.Lease
	switch {
	case now.UID == was.UID && now.ResourceVersion == was.ResourceVersion:
		// Unchanged now does not mean never: a server that answered with
		// a timeout, or a proxy, may still apply the request later.
		return nil, &UnknownWriteError{Err: fmt.Errorf("%w (the Lease read again is unchanged at resourceVersion %s, but a write in flight may still be applied)", werr, now.ResourceVersion)}
	case now.UID == was.UID && !now.Held && r.Source != nil && !hasLockInfo(r.Source):
		out.Action = v1alpha1.ActionUnlocked
		out.Warnings = append(out.Warnings, "the answer to the write was lost ("+werr.Error()+"); the Lease read again shows the lock cleared, by this write or by another client since it was read")
		return out, nil
	}
	return nil, &UnknownWriteError{Err: fmt.Errorf("%w (the Lease read again changed otherwise)", werr)}
}

// refusedCommands are what a refused operator can run: a look at a live
// holder pod, then the unlock with the flags the guards ask for; or, when
// the ID they gave no longer matches, a fresh look at the lock.
func (u *Unlocker) refusedCommands(r inspect.Result, g Decision, o Options, namespace string) []v1alpha1.Advice {
	if g.Next == nil {
		return []v1alpha1.Advice{advice.Run("", u.Advice.Explain(o.Arg, namespace))}
	}
	var out []v1alpha1.Advice
	if p := r.Facts.Pod; p != nil && p.Exists {
		if r.Decision.Verdict == v1alpha1.Live {
			out = append(out, advice.Run("", u.Advice.Logs(namespace, p.Name)))
		}
		out = append(out, advice.Run("", u.Advice.DescribePod(namespace, p.Name)))
	}
	return u.Advice.Finish(append(out, advice.Run("", u.Advice.Unlock(o.Arg, namespace, *g.Next, true, o.Reconcile))))
}

// Change is the write Unlock makes: the runtimes' own Unlock, and nothing
// more. spec.holderIdentity becomes null (never ""), only the lock-info
// annotation goes, and the update carries the resourceVersion read.
func Change(l inspect.Lease) *v1alpha1.LeaseChange {
	return &v1alpha1.LeaseChange{ResourceVersion: l.ResourceVersion, HolderIdentity: l.ID, RemoveAnnotation: inspect.AnnotationLock}
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

// recordTimeout bounds the Event and the reconcile patch after a write;
// writeTimeout the write, which an interrupt does not cancel either.
const (
	recordTimeout = 30 * time.Second
	writeTimeout  = 30 * time.Second
)

// errInterruptedBeforeWrite: the run was interrupted after the lock was
// read and before its write was sent, so nothing was written.
var errInterruptedBeforeWrite = errors.New("interrupted before the write was sent")

// Record follows an unlock that wrote (ActionUnlocked): it records the
// Event and, when asked, triggers a reconcile. Their failures are
// warnings, for the lock is already clear; an Event that could not be
// created also marks the outcome Unrecorded, which the command turns into
// an error before any other write. A create that failed without the
// server refusing it is sent again, a few times. It does nothing for
// other outcomes. An interrupt does not stop it: the lock is cleared, and
// its record is part of that write; recordTimeout bounds it instead.
func (u *Unlocker) Record(ctx context.Context, out *Outcome, o Options) {
	if out.Action != v1alpha1.ActionUnlocked {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	name, err := u.recordEvent(ctx, out.Result)
	if err != nil {
		out.Unrecorded = true
		out.Warnings = append(out.Warnings, "the unlock was not recorded as an Event: "+err.Error())
		if o.Reconcile {
			// The patch is a write too: none follows one not on record.
			out.Warnings = append(out.Warnings, "--reconcile: the object was not annotated, for the unlock is not on record")
		}
		return
	}
	out.Event = name
	owner := out.Result.Facts.Owner
	exists := owner != nil && owner.Exists != nil && *owner.Exists
	if !o.Reconcile {
		if exists {
			out.Commands = u.Advice.Finish([]v1alpha1.Advice{advice.Run("", u.Advice.Reconcile(owner.Ref.String(), owner.Ref.Namespace, u.now()))})
		}
		return
	}
	if !exists {
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
	var out v1alpha1.UnlockResult
	if o.Result.Facts.Lease.Name != "" {
		l := o.Result.Lock()
		out = v1alpha1.UnlockResult{
			ObjectMeta: l.ObjectMeta, Object: l.Object, Verdict: l.Verdict, Reason: l.Reason, CAPTFDeletesLease: l.CAPTFDeletesLease,
			Lock: l.Lock, Holder: l.Holder,
		}
	} else {
		out.Name, out.Namespace = o.Lease, o.Namespace
	}
	out.Action, out.DryRun, out.Message = o.Action, o.DryRun, o.Message
	out.Event, out.Reconcile, out.Warnings, out.Commands = o.Event, o.Reconcile, o.Warnings, o.Commands
	out.SetTypeMeta()
	if o.Action == v1alpha1.ActionUnlocked || o.Action == v1alpha1.WouldUnlock {
		out.Change = Change(o.Result.Facts.Lease)
	}
	return out
}
