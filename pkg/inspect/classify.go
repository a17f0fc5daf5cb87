package inspect

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
)

// Owner is the CAPTF object a lock was matched to, and how.
type Owner struct {
	Ref object.Ref
	// UID is the object's, when it was listed.
	UID types.UID
	// Exists is false when the object was deleted or its kind is not
	// served, nil when the object list could not be read.
	Exists *bool
	// Via says what established the owner: "object", "lease labels" or
	// "holder pod name".
	Via string
}

// Pod is what was read of the pod a holder host names.
type Pod struct {
	Name   string
	Exists bool
	// Invalid is true when Name cannot be a pod name at all: no pod can
	// have it, so it was not asked for (CAPTF asks, and gets NotFound).
	Invalid     bool
	Phase       corev1.PodPhase
	Terminating bool
	// Status and Node are kept for the death evidence of finished pods.
	Status *corev1.PodStatus
	Node   string
}

// Facts is everything the verdict depends on, read beforehand.
type Facts struct {
	Lease Lease
	// Owner is nil when no CAPTF object owns the lock's suffix.
	Owner *Owner
	// NoOwnerWhy explains a nil Owner (for example that the kinds are not served).
	NoOwnerWhy string
	// Pod is the pod named by the holder host: always set (Exists or not)
	// for an own-pod holder, set for any other host only when a list
	// returned it.
	Pod *Pod
	// Warnings name labels that disagree with the Lease's name. CAPTF
	// never reads them; they are shown and never decide anything.
	Warnings []string
	// Gate is what keeps CAPTF from starting the owner's next Job; nil
	// when the owner was not read in full (it is read only for a lock
	// whose own runner is gone, the one case it decides).
	Gate *jobgate.Gate
}

// Decision is the verdict and its evidence.
type Decision struct {
	Verdict v1alpha1.Verdict
	// Reason is one sentence naming the evidence.
	Reason string
	// CAPTFClears is true when a Job CAPTF will start force-unlocks the
	// lock: a Stale lock of an existing object, with a consistent ID, whose
	// object no gate holds back. It is StaleCase == StaleClears.
	CAPTFClears bool
	// StaleCase says why a Stale lock will or will not clear; NotStale for
	// every other verdict. Whoever says what CAPTF does next reads it here
	// rather than deciding it again.
	StaleCase StaleCase
	// Steps are the controller's checks as they went.
	Steps []v1alpha1.Step
}

// StaleCase is why a Stale lock will or will not clear, in the order
// Classify tells the cases apart (the first that applies is the case).
// Only a Job CAPTF creates force-unlocks the lock, with the lock info's ID.
type StaleCase int

const (
	// NotStale: the verdict is not Stale.
	NotStale StaleCase = iota
	// StaleIDMismatch: the lock info's ID differs from holderIdentity, so
	// every force-unlock CAPTF's Jobs run misses and the lock never clears.
	StaleIDMismatch
	// StaleOwnerUnread: whether the object exists could not be read.
	StaleOwnerUnread
	// StaleOwnerGone: the object no longer exists, so no Job will come.
	StaleOwnerGone
	// StaleGatesUnread: the object was not read in full, so whether a Job
	// starts is not known (Facts.Gate is nil).
	StaleGatesUnread
	// StaleGateClosed: a gate stops every Job (Facts.Gate says which).
	StaleGateClosed
	// StaleGateUnsure: a gate may hold Jobs back (Facts.Gate says which).
	StaleGateUnsure
	// StaleClears: no gate holds the object back; its next Job clears the
	// lock (CAPTFClears).
	StaleClears
)

var staleCaseNames = [...]string{"NotStale", "IDMismatch", "OwnerUnread", "OwnerGone", "GatesUnread", "GateClosed", "GateUnsure", "Clears"}

func (c StaleCase) String() string {
	if c < 0 || int(c) >= len(staleCaseNames) {
		return fmt.Sprintf("StaleCase(%d)", int(c))
	}
	return staleCaseNames[c]
}

// OwnPodHost returns the holder host when it is a pod of the owner's own
// runner Jobs, which is when the controller reads that pod. The engine uses
// it to decide which pods to read; Classify uses it to decide.
func OwnPodHost(l Lease, owner *Owner) (string, bool) {
	if !l.Held || l.ID == "" || l.Info == nil || l.HostErr != nil || owner == nil {
		return "", false
	}
	return l.Host, runner.OwnsPod(owner.Ref.Kind, owner.Ref.Name, l.Host) == nil
}

// Classify applies CAPTF's stale-lock rules, in the controller's order.
// It is the one place a verdict is made.
func Classify(f Facts) Decision {
	d := &Decision{}
	l := f.Lease
	if !l.Held {
		d.step("Is a holder set?", "spec.holderIdentity is absent", "not held")
		return d.done(f, v1alpha1.Unlocked, "the Lease has no holder")
	}
	if l.Workspace != object.DefaultWorkspace {
		why := fmt.Sprintf("the lock is of workspace %q; CAPTF reads only workspace %q (lock-tfstate-default-<suffix>), so no controller reads this lock", l.Workspace, object.DefaultWorkspace)
		d.step("Is it a lock CAPTF reads?", "workspace "+l.Workspace, "no")
		return d.done(f, v1alpha1.Foreign, why+", whoever holds it: none clears it")
	}
	if l.ID == "" {
		d.step("Is a holder set?", `spec.holderIdentity is ""`, "held by an empty ID")
		return d.done(f, v1alpha1.Unknown, `holderIdentity is "": Terraform treats the state as locked by an empty ID while CAPTF treats it as free, so nothing clears it`)
	}
	d.step("Is a holder set?", fmt.Sprintf("spec.holderIdentity is %q", l.ID), "held")
	if l.Info == nil {
		d.step("Does the lock info parse?", l.InfoErr.Error(), "no")
		return d.done(f, v1alpha1.Unknown, l.InfoErr.Error()+", so nobody can identify the holder and CAPTF never clears it")
	}
	d.step("Does the lock info parse?", fmt.Sprintf("ID %q, %s by %q", l.Info.ID, l.Info.Operation, l.Info.Who), "yes")
	if l.HostErr != nil {
		d.step("Which host does Who name?", l.HostErr.Error(), "none")
		return d.done(f, v1alpha1.Unknown, l.HostErr.Error()+", so nobody can identify the holder and CAPTF never clears it")
	}
	d.step("Which host does Who name?", fmt.Sprintf("Who %q", l.Info.Who), fmt.Sprintf("host %q", l.Host))
	if f.Owner == nil {
		why := f.NoOwnerWhy
		if why == "" {
			why = "no CAPTF object owns suffix " + l.Suffix
		}
		d.step("Which CAPTF object owns the lock?", why, "none")
		return d.done(f, v1alpha1.Foreign, why+", so nothing is its own runner and CAPTF never clears the lock")
	}
	ref := f.Owner.Ref
	d.step("Which CAPTF object owns the lock?", fmt.Sprintf("suffix %s is %s's (from the %s)", l.Suffix, ref, f.Owner.Via), ref.String())
	if err := runner.OwnsPod(ref.Kind, ref.Name, l.Host); err != nil {
		d.step(fmt.Sprintf("Is %q a pod of %s's own runner Jobs?", l.Host, ref), err.Error(), "no")
		reason := fmt.Sprintf("holder host %s is not a runner pod of %s", l.Host, ref)
		if f.Pod != nil && f.Pod.Exists {
			reason += fmt.Sprintf(" (pod %s exists, %s)", f.Pod.Name, f.Pod.State())
		}
		return d.done(f, v1alpha1.Foreign, reason+"; CAPTF never clears it")
	}
	p, _ := runner.ParsePodName(l.Host)
	d.step(fmt.Sprintf("Is %q a pod of %s's own runner Jobs?", l.Host, ref),
		fmt.Sprintf("Job %s: op %s, attempt %d, hash %s", p.Job, p.Op, p.Attempt, p.Hash6), "yes")
	switch {
	case f.Pod != nil && f.Pod.Invalid:
		// CAPTF GETs it and is answered NotFound: same outcome, no request.
		d.step("Does the holder pod exist?", "pod name "+l.Host+" is not a valid pod name, so no pod can have it (CAPTF's GET answers NotFound)", "gone: stale")
		return d.stale(f, fmt.Sprintf("holder pod %s cannot exist: its name is not a valid pod name", l.Host))
	case f.Pod == nil || !f.Pod.Exists:
		d.step("Does the holder pod exist?", "pod "+l.Host+" is not found", "gone: stale")
		return d.stale(f, fmt.Sprintf("holder pod %s no longer exists", l.Host))
	}
	d.step("Does the holder pod exist?", fmt.Sprintf("pod %s is %s", f.Pod.Name, f.Pod.State()), "exists")
	if f.Pod.Phase == corev1.PodSucceeded || f.Pod.Phase == corev1.PodFailed {
		d.step("Has the pod finished?", "phase "+string(f.Pod.Phase), "finished: stale")
		return d.stale(f, fmt.Sprintf("holder pod %s is %s", f.Pod.Name, f.Pod.Phase))
	}
	d.step("Has the pod finished?", f.Pod.State(), "alive")
	return d.done(f, v1alpha1.Live, fmt.Sprintf("holder pod %s is %s; the next Job waits for the lock", f.Pod.Name, f.Pod.State()))
}

// stale finishes a Stale decision, saying whether CAPTF will clear it:
// only a Job it starts force-unlocks the lock, and only with the ID that
// the backend compares.
func (d *Decision) stale(f Facts, reason string) Decision {
	l, o := f.Lease, f.Owner
	switch {
	case l.Info.ID != "" && l.Info.ID != l.ID:
		d.StaleCase = StaleIDMismatch
		reason += fmt.Sprintf("; its lock-info ID %s differs from holderIdentity %s, so CAPTF's force-unlock never matches: every Job CAPTF starts force-unlocks %s, the backend answers \"does not match existing lock\", the runner counts that as success and the lock stays, so it never clears by itself; each such Job emits another ForceUnlocked event and adds to captf_lock_force_unlocks_total, which keeps the CAPTFForceUnlocks alert firing", l.Info.ID, l.ID, l.Info.ID)
	case o.Exists == nil:
		d.StaleCase = StaleOwnerUnread
		reason += fmt.Sprintf("; CAPTF clears it with the next Job only if %s exists, which could not be read", o.Ref)
	case !*o.Exists:
		d.StaleCase = StaleOwnerGone
		reason += fmt.Sprintf("; %s no longer exists, so no controller will clear it", o.Ref)
	case f.Gate == nil:
		d.StaleCase = StaleGatesUnread
		reason += fmt.Sprintf("; CAPTF clears it with %s's next Job, if a Job starts (the object's gates could not be read)", o.Ref)
	case f.Gate.State == jobgate.Closed:
		d.StaleCase = StaleGateClosed
		reason += "; CAPTF will not clear it: " + f.Gate.Reason
	case f.Gate.State == jobgate.Unsure:
		d.StaleCase = StaleGateUnsure
		reason += fmt.Sprintf("; CAPTF clears it with %s's next Job, if a Job starts: %s", o.Ref, f.Gate.Reason)
	default:
		d.StaleCase, d.CAPTFClears = StaleClears, true
		reason += "; CAPTF clears it with the object's next Job"
	}
	return d.done(f, v1alpha1.Stale, reason)
}

func (d *Decision) step(check, observed, result string) {
	d.Steps = append(d.Steps, v1alpha1.Step{Check: check, Observed: observed, Result: result})
}

// done records the verdict. Labels that disagree with the Lease's name end
// the reason as a warning: shown wherever the reason is, never acted on.
func (d *Decision) done(f Facts, v v1alpha1.Verdict, reason string) Decision {
	for _, w := range f.Warnings {
		reason += "; warning: " + w
	}
	d.Verdict, d.Reason = v, reason
	return *d
}

// State describes a pod's phase, noting a pending deletion.
func (p *Pod) State() string {
	s := string(p.Phase)
	if s == "" {
		s = "in no phase yet"
	}
	if p.Terminating {
		s += " and terminating"
	}
	return s
}
