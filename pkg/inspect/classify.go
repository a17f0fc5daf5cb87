package inspect

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
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
	// Deleting is true when the listed object has a deletionTimestamp.
	Deleting bool
	// Via says what established the owner: "object", "lease labels" or
	// "holder pod name".
	Via string
	// Cluster is the Cluster API Cluster the listed object belongs to
	// (ClusterOf), "" when it names none or was not listed.
	Cluster string
}

// Pod is what was read of the pod a holder host names.
type Pod struct {
	Name   string
	Exists bool
	// Invalid is true when Name cannot be a pod name at all: no pod can
	// have it, so it was not asked for. CAPTF asks: for a name client-go
	// sends (RefusedName false) the API server answers NotFound; one it
	// refuses fails CAPTF's lock check instead.
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
	// NamespaceEmpty is true when every CAPTF kind was listed in the
	// lock's namespace and none has an object there: CAPTF's orphan sweep
	// then deletes the Lease if it carries captf.io/managed=true.
	NamespaceEmpty bool
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
	// Gate is what keeps CAPTF from starting the owner's next Job, and
	// whether CAPTF deletes the Lease itself; nil when the owner was not
	// read in full (it is read for a lock whose own runner is gone and
	// for an owner being deleted, the cases it decides).
	Gate *jobgate.Gate
	// Runtime is what CAPTF's next Job meets once it runs its steps; set
	// with Gate.
	Runtime Runtime
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
	// Case is what CAPTF's controller does with the lock, for every
	// verdict; for a Stale one (CaseStale), StaleCase says why it will or
	// will not clear. Whoever says what CAPTF does next (explain, unlock's
	// advice) reads them here rather than deciding again.
	Case Case
	// StaleCase says why a Stale lock will or will not clear; NotStale for
	// every other verdict.
	StaleCase StaleCase
	// DeletesLease is set when CAPTF's controller deletes the lock Lease
	// itself, without a Job and whoever holds it (Retain, the release of
	// an externally managed object, a cleanup); nil when it does not.
	DeletesLease *jobgate.Deletion
	// Steps are the controller's checks as they went.
	Steps []v1alpha1.Step
}

// Case is what CAPTF's controller does with a lock, one for each way
// Classify can decide it. Stale has one, CaseStale, which StaleCase
// details; Foreign and Unknown share theirs, as CAPTF treats a lock it
// cannot read and one held by another alike.
type Case int

const (
	// CaseFree: Unlocked; nothing to do.
	CaseFree Case = iota + 1
	// CaseOwnRunner: Live; the object's own runner holds the lock, and
	// CAPTF starts no Job of the object until the pod has ended (its run
	// lease); then the lock is stale.
	CaseOwnRunner
	// CaseStale: Stale; StaleCase says whether and how it clears.
	CaseStale
	// CaseOtherWorkspace: a lock of a workspace other than default, which
	// no controller reads.
	CaseOtherWorkspace
	// CaseEmptyID: holderIdentity "", which CAPTF treats as no lock while
	// every runtime sees the state locked.
	CaseEmptyID
	// CaseNoOwner: no CAPTF object owns the lock, so no controller reads
	// it.
	CaseNoOwner
	// CaseOwnerUnread: whether the owner exists could not be read; if it
	// does, CaseStateLocked.
	CaseOwnerUnread
	// CaseOwnerGone: the owner no longer exists, so no controller reads
	// the lock.
	CaseOwnerGone
	// CaseStateLocked: CAPTF reads the lock, never clears it through a
	// Job, and at a reconcile that reads the state sets
	// StateReadable=False/StateLocked; every Job fails.
	CaseStateLocked
)

var caseNames = [...]string{"", "Free", "OwnRunner", "Stale", "OtherWorkspace", "EmptyID", "NoOwner", "OwnerUnread", "OwnerGone", "StateLocked"}

func (c Case) String() string {
	if c <= 0 || int(c) >= len(caseNames) {
		return fmt.Sprintf("Case(%d)", int(c))
	}
	return caseNames[c]
}

// caseOf is the case of a verdict, in the order CAPTF meets the lock: the
// workspace it reads, the ID it takes for a lock, the owner that reads it.
func caseOf(f Facts, v v1alpha1.Verdict) Case {
	l, o := f.Lease, f.Owner
	switch {
	case v == v1alpha1.Unlocked:
		return CaseFree
	case v == v1alpha1.Live:
		return CaseOwnRunner
	case v == v1alpha1.Stale:
		return CaseStale
	case l.Workspace != object.DefaultWorkspace:
		return CaseOtherWorkspace
	case l.ID == "":
		return CaseEmptyID
	case o == nil:
		return CaseNoOwner
	case o.Exists == nil:
		return CaseOwnerUnread
	case !*o.Exists:
		return CaseOwnerGone
	}
	return CaseStateLocked
}

// StaleCase is why a Stale lock will or will not clear through a Job
// CAPTF creates, which force-unlocks it with the lock info's ID. Classify
// tells them apart in this order (the first that applies is the case):
// for a holder name client-go refuses, OwnerUnread, OwnerGone, GateClosed
// (a gate that stops before the lock check), then CheckFails; for any
// other, FlagID, RuntimeInfo, IDMismatch, OwnerUnread, OwnerGone,
// GatesUnread, GateClosed, NoSteps, NoState, UnreadableState, Relabeled,
// Chunked, Tried, GateUnsure,
// Clears. The first ones are CAPTF's; FlagID, RuntimeInfo, IDMismatch,
// NoSteps, NoState and Relabeled are what the
// runtime does once the Job runs (Runtime). Whether CAPTF deletes the Lease itself, without a
// Job, is Decision.DeletesLease.
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
	// StaleCheckFails: the holder pod's name is one client-go refuses
	// (RefusedName), so CAPTF's lock check fails on every reconcile that
	// reaches it and no Job starts.
	StaleCheckFails
	// StaleRuntimeInfo: the lock info decodes as CAPTF reads it but not
	// as the runtime does (Lease.RuntimeInfoErr), so every Job's
	// force-unlock fails with an error CAPTF's runner does not accept.
	StaleRuntimeInfo
	// StaleNoState: the object has no state (Runtime.NoState), so the
	// init of every Job that could start fails on the lock itself and its
	// force-unlock step never runs.
	StaleNoState
	// StaleNoSteps: CAPTF's Jobs end before their steps (Runtime.NoSteps:
	// the runner image cannot be pulled or is invalid).
	StaleNoSteps
	// StaleRelabeled: the state Secrets lack labels CAPTF passes the
	// backend (Runtime.Relabeled): a Terraform image's init finds no
	// state and fails on the lock, an OpenTofu image's clears it, and
	// nothing the plugin reads says which image runs.
	StaleRelabeled
	// StaleFlagID: the ID CAPTF passes to force-unlock begins with "-"
	// (FlagID), so the runtime takes it for a flag and the step fails.
	StaleFlagID
	// StaleChunked: the state is chunked (Runtime.Chunked): a Terraform
	// image's init reads it and the force-unlock clears the lock, an
	// OpenTofu image's init cannot, and nothing the plugin reads says
	// which image runs.
	StaleChunked
	// StaleTried: one of the object's own Jobs carries this lock's ID in
	// its --force-unlock argument and failed, and the lock is still held
	// (Runtime.Tried), so that Job's force-unlock did not clear it, and
	// nothing read says the next one fares better (review26f n1).
	StaleTried
	// StaleUnreadableState: the only Job CAPTF starts is the restore
	// asked for, and its init reads the state CAPTF could not read
	// (Runtime.UnreadableState: StateCorrupt, StateEncrypted), on which
	// terraform and OpenTofu fail too, so its force-unlock step never
	// runs (review26g F6).
	StaleUnreadableState
)

var staleCaseNames = [...]string{"NotStale", "IDMismatch", "OwnerUnread", "OwnerGone", "GatesUnread", "GateClosed", "GateUnsure", "Clears", "CheckFails", "RuntimeInfo", "NoState", "NoSteps", "Relabeled", "FlagID", "Chunked", "Tried", "UnreadableState"}

// maxStep is how many characters of what a step observed are kept.
const maxStep = 1024

// RefusedName is whether client-go's request builder refuses name as a
// resource name (its rest.IsValidPathSegmentName, the same check as
// apimachinery's content.IsPathSegmentName: ".", "..", or containing "/"
// or "%"), failing the request before anything is sent, with an error that
// is not NotFound. It returns what it refuses, "" when it accepts it.
func RefusedName(name string) string {
	if bad := content.IsPathSegmentName(name); len(bad) > 0 {
		return bad[0]
	}
	return ""
}

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
		return d.done(f, v1alpha1.Foreign, why+", whoever holds it: "+d.never(f, "none clears it", "no Job clears it"))
	}
	if l.ID == "" {
		d.step("Is a holder set?", `spec.holderIdentity is ""`, "held by an empty ID")
		return d.done(f, v1alpha1.Unknown, `holderIdentity is "": Terraform treats the state as locked by an empty ID while CAPTF treats it as free, so `+d.never(f, "nothing clears it", "no Job clears it"))
	}
	d.step("Is a holder set?", "spec.holderIdentity is "+Quoted(l.ID), "held")
	if l.Info == nil {
		d.step("Does the lock info parse?", l.InfoErr.Error(), "no")
		return d.done(f, v1alpha1.Unknown, l.InfoErr.Error()+", so nobody can identify the holder and "+d.never(f, "CAPTF never clears it", "no Job of CAPTF's clears it"))
	}
	d.step("Does the lock info parse?", fmt.Sprintf("ID %s, %s by %s", Quoted(l.Info.ID), QuotedOperation(l.Info.Operation), Quoted(l.Info.Who)), "yes")
	if l.HostErr != nil {
		d.step("Which host does Who name?", l.HostErr.Error(), "none")
		return d.done(f, v1alpha1.Unknown, l.HostErr.Error()+", so nobody can identify the holder and "+d.never(f, "CAPTF never clears it", "no Job of CAPTF's clears it"))
	}
	d.step("Which host does Who name?", "Who "+Quoted(l.Info.Who), "host "+Quoted(l.Host))
	if f.Owner == nil {
		why := f.NoOwnerWhy
		if why == "" {
			why = "no CAPTF object owns suffix " + l.Suffix
		}
		d.step("Which CAPTF object owns the lock?", why, "none")
		return d.done(f, v1alpha1.Foreign, why+", so nothing is its own runner and "+d.never(f, "CAPTF never clears the lock", "no Job of CAPTF's clears it"))
	}
	ref := f.Owner.Ref
	d.step("Which CAPTF object owns the lock?", fmt.Sprintf("suffix %s is %s's (from the %s)", l.Suffix, ref, f.Owner.Via), ref.String())
	if err := runner.OwnsPod(ref.Kind, ref.Name, l.Host); err != nil {
		d.step(fmt.Sprintf("Is %s a pod of %s's own runner Jobs?", Quoted(l.Host), ref), err.Error(), "no")
		reason := fmt.Sprintf("holder host %s is not a runner pod of %s", Named(l.Host), ref)
		if f.Pod != nil && f.Pod.Exists {
			reason += fmt.Sprintf(" (that pod exists, %s)", f.Pod.State())
		}
		return d.done(f, v1alpha1.Foreign, reason+"; "+d.never(f, "CAPTF never clears it", "no Job of CAPTF's clears it"))
	}
	p, _ := runner.ParsePodName(l.Host)
	d.step(fmt.Sprintf("Is %s a pod of %s's own runner Jobs?", Quoted(l.Host), ref),
		fmt.Sprintf("Job %s: op %s, attempt %d, hash %s", p.Job, p.Op, p.Attempt, p.Hash6), "yes")
	if why := RefusedName(l.Host); why != "" {
		// client-go refuses the name before sending CAPTF's GET: an error,
		// not NotFound, so CAPTF's lock check fails (locks/stale.go Check).
		d.step("Does the holder pod exist?", fmt.Sprintf("pod name %s %s: client-go refuses it as a name and sends no request, so CAPTF's GET of it fails with an error that is not NotFound (the plugin sends none)", Quoted(l.Host), why), "no pod can have it: stale, and CAPTF's lock check fails")
		return d.stale(f, fmt.Sprintf("holder pod %s cannot exist: client-go refuses its name (%s)", Named(l.Host), why))
	}
	switch {
	case f.Pod != nil && f.Pod.Invalid:
		// CAPTF GETs it and is answered NotFound: same outcome, no request.
		d.step("Does the holder pod exist?", "pod name "+Named(l.Host)+" is not a valid pod name, so no pod can have it (CAPTF's GET reaches the API server and is answered NotFound; the plugin sends none)", "gone: stale")
		return d.stale(f, fmt.Sprintf("holder pod %s cannot exist: its name is not a valid pod name", Named(l.Host)))
	case f.Pod == nil || !f.Pod.Exists:
		d.step("Does the holder pod exist?", "pod "+Named(l.Host)+" is not found", "gone: stale")
		return d.stale(f, fmt.Sprintf("holder pod %s no longer exists", Named(l.Host)))
	}
	d.step("Does the holder pod exist?", fmt.Sprintf("pod %s is %s", f.Pod.Name, f.Pod.State()), "exists")
	if f.Pod.Phase == corev1.PodSucceeded || f.Pod.Phase == corev1.PodFailed {
		d.step("Has the pod finished?", "phase "+string(f.Pod.Phase), "finished: stale")
		return d.stale(f, fmt.Sprintf("holder pod %s is %s", f.Pod.Name, f.Pod.Phase))
	}
	d.step("Has the pod finished?", f.Pod.State(), "alive")
	return d.done(f, v1alpha1.Live, fmt.Sprintf("holder pod %s is %s; CAPTF starts no Job of %s while it runs (its run lease %s is not free until every pod of the pod's Job has ended: WaitingForRunLease), and once it has ended the lock is stale and the next Job CAPTF starts force-unlocks it", f.Pod.Name, f.Pod.State(), ref, RunLeaseName(l.Suffix)))
}

// stale finishes a Stale decision, saying whether CAPTF will clear it:
// only a Job it starts force-unlocks the lock, and only with the ID that
// the backend compares; and it reaches the Job only when its lock check
// succeeds.
func (d *Decision) stale(f Facts, reason string) Decision {
	l, o, g := f.Lease, f.Owner, f.Gate
	if RefusedName(l.Host) != "" {
		switch {
		case o.Exists == nil:
			d.StaleCase = StaleOwnerUnread
			reason += fmt.Sprintf("; whether %s exists could not be read; if it does, CAPTF's lock check fails on every reconcile (client-go refuses the name before any request), so no Job starts and the lock stays until someone clears it", o.Ref)
		case !*o.Exists:
			d.StaleCase = StaleOwnerGone
			reason += fmt.Sprintf("; %s no longer exists, so %s", o.Ref, d.never(f, "no controller will clear it", "no Job will clear it"))
		case g != nil && g.BeforeLockCheck:
			d.StaleCase = StaleGateClosed
			reason += "; CAPTF's reconcile stops before its lock check, and no Job force-unlocks it: " + g.Reason
		default:
			d.StaleCase = StaleCheckFails
			reason += "; CAPTF's lock check GETs that pod and fails on every reconcile that reaches it, before anything else: no Job starts, no StateLocked is set, and on deletion no Retain or cleanup runs, so the lock stays until someone clears it (kubectl captf unlock may)"
			switch {
			case g == nil:
				// The preamble may stop first (an externally managed
				// deletion, which deletes the Lease); no Job either way.
				reason += "; whether CAPTF's preamble stops before that check could not be read (the object's gates were not read)"
			case g.MaybeBeforeLockCheck:
				reason += "; unless CAPTF's preamble releases the object first: " + g.Reason
			}
		}
		return d.done(f, v1alpha1.Stale, reason)
	}
	rt := f.Runtime
	noState, noStateWhy := rt.NoState(l.Suffix)
	switch {
	case FlagID(CAPTFID(l)) != "":
		d.StaleCase = StaleFlagID
		reason += "; " + FlagID(CAPTFID(l)) + ", so " + d.never(f, "it never clears by itself", "no Job of CAPTF's clears it")
	case l.RuntimeInfoErr != nil:
		d.StaleCase = StaleRuntimeInfo
		reason += fmt.Sprintf("; its lock info decodes as CAPTF reads it (ID, Operation, Who, Version, Created) but not as terraform and OpenTofu read it (%v): their Unlock decodes the whole lock info before it compares IDs, so the force-unlock step of every Job CAPTF starts fails with that error, which CAPTF's runner does not accept, the Job fails and the lock stays, so %s", l.RuntimeInfoErr, d.never(f, "it never clears by itself", "no Job of CAPTF's clears it"))
	case l.Info.ID != "" && l.Info.ID != l.ID:
		d.StaleCase = StaleIDMismatch
		reason += fmt.Sprintf("; its lock-info ID %s differs from holderIdentity %s, so CAPTF's force-unlock never matches: %s, so %s; each such Job emits another ForceUnlocked event and adds to captf_lock_force_unlocks_total, which keeps the CAPTFForceUnlocks alert firing", Named(l.Info.ID), Named(l.ID), MismatchText(l), d.never(f, "it never clears by itself", "no Job of CAPTF's clears it"))
	case o.Exists == nil:
		d.StaleCase = StaleOwnerUnread
		reason += fmt.Sprintf("; CAPTF clears it with the next Job only if %s exists, which could not be read", o.Ref)
	case !*o.Exists:
		d.StaleCase = StaleOwnerGone
		reason += fmt.Sprintf("; %s no longer exists, so %s", o.Ref, d.never(f, "no controller will clear it", "no Job will clear it"))
	case g == nil:
		d.StaleCase = StaleGatesUnread
		reason += fmt.Sprintf("; CAPTF clears it with %s's next Job, if a Job starts and its init reads the state (the object's gates could not be read)", o.Ref)
	case g.State == jobgate.Closed && g.Deletes != nil:
		d.StaleCase = StaleGateClosed
		reason += "; no Job of CAPTF's force-unlocks it: " + g.Reason
	case g.State == jobgate.Closed:
		d.StaleCase = StaleGateClosed
		reason += "; CAPTF will not clear it: " + g.Reason
	case rt.Blocked(g.NextOp) != "":
		d.StaleCase = StaleNoSteps
		reason += fmt.Sprintf("; no Job of CAPTF's clears it until the image runs: %s", rt.NoStepsText(g.NextOp))
	case noState:
		d.StaleCase = StaleNoState
		reason += fmt.Sprintf("; no Job clears it: %s, and %s", noStateWhy, NoStateText(g, rt))
		if g.State == jobgate.Unsure {
			reason += "; whether that Job starts at all: " + g.Reason
		}
	case rt.UnreadableState(g.NextOp) != "":
		d.StaleCase = StaleUnreadableState
		reason += "; no Job clears it: " + UnreadableStateText(rt.UnreadableState(g.NextOp), rt)
		if g.State == jobgate.Unsure {
			reason += "; whether that Job starts at all: " + g.Reason
		}
	case rt.Relabeled() != "":
		d.StaleCase = StaleRelabeled
		reason += "; whether a Job clears it depends on the runtime: " + RelabeledText(rt.Relabeled())
		if g.State == jobgate.Unsure {
			reason += "; whether that Job starts at all: " + g.Reason
		}
	case rt.Chunked(l.Suffix) != "" || rt.ChunkGap(l.Suffix) != "":
		d.StaleCase = StaleChunked
		if gap := rt.ChunkGap(l.Suffix); gap != "" {
			reason += "; whether a Job clears it depends on the runtime: " + ChunkGapText(gap)
		} else {
			reason += "; whether a Job clears it depends on the runtime: " + ChunkedText(rt.Chunked(l.Suffix))
		}
		if g.State == jobgate.Unsure {
			reason += "; whether that Job starts at all: " + g.Reason
		}
	case rt.Tried != nil:
		d.StaleCase = StaleTried
		reason += "; CAPTF's Jobs have not cleared it: " + TriedText(rt.Tried, CAPTFID(l))
		if g.State == jobgate.Unsure {
			reason += "; whether a next Job starts at all: " + g.Reason
		}
	case g.State == jobgate.Unsure || rt.MaybeNoState() != "" || rt.PinnedText(g.NextOp) != "":
		d.StaleCase = StaleGateUnsure
		switch {
		case g.State == jobgate.Unsure:
			reason += fmt.Sprintf("; CAPTF clears it with %s's next Job, if a Job starts: %s", o.Ref, g.Reason)
		case rt.MaybeNoState() != "":
			reason += fmt.Sprintf("; CAPTF clears it with %s's next Job only if its state Secret exists", o.Ref)
		default:
			reason += fmt.Sprintf("; CAPTF clears it with %s's next Job (%s) only if its image runs", o.Ref, g.Next)
		}
		if p := rt.PinnedText(g.NextOp); p != "" {
			reason += "; " + p
		}
		if l := rt.StateLimitText(g.NextOp); l != "" {
			reason += "; " + l
		}
		if m := rt.MaybeNoState(); m != "" {
			reason += "; " + m
		}
		if rt.MaybeNoBase() {
			reason += "; " + NoBaseText
		}
	default:
		d.StaleCase, d.CAPTFClears = StaleClears, true
		reason += "; CAPTF clears it with the object's next Job"
		if g.Next != "" {
			reason += " (" + g.Next + ")"
		}
		if w := rt.WaitText(); w != "" {
			reason += "; " + w
		}
		if u := rt.UnlistedText(); u != "" {
			reason += "; " + u
		}
	}
	return d.done(f, v1alpha1.Stale, reason)
}

// CAPTFID is the ID CAPTF's Job force-unlocks: the lock info's ID where
// it has one, else holderIdentity. Prose names it with Named.
func CAPTFID(l Lease) string {
	if l.Info != nil && l.Info.ID != "" {
		return l.Info.ID
	}
	return l.ID
}

// leaseDeletion is the gate's deletion of the Lease, when CAPTF reaches
// it: only the Lease lock-tfstate-default-<suffix> of an existing object,
// and not past a lock check that fails.
func (d *Decision) leaseDeletion(f Facts) *jobgate.Deletion {
	o, g := f.Owner, f.Gate
	if f.NamespaceEmpty && f.Lease.Labels[LabelManaged] == "true" {
		sweep := jobgate.OrphanSweep
		return &sweep
	}
	switch {
	case o == nil || o.Exists == nil || !*o.Exists || g == nil || g.Deletes == nil:
		return nil
	case f.Lease.Workspace != object.DefaultWorkspace:
		return nil
	case d.StaleCase == StaleCheckFails && g.Deletes.AfterLockCheck:
		return nil
	}
	return g.Deletes
}

// never is what a lock no Job clears gets as its end: never when CAPTF
// does not delete its Lease either, else only that no Job clears it (the
// deletion follows in the reason).
func (d *Decision) never(f Facts, never, noJob string) string {
	if d.leaseDeletion(f) != nil {
		return noJob
	}
	return never
}

// DeletionSentence says, in one clause, that CAPTF deletes the Lease.
func DeletionSentence(x *jobgate.Deletion) string {
	if x.Certain {
		return fmt.Sprintf("CAPTF deletes this lock Lease itself, without a Job, %s (%s): %s", x.When, x.Path, jobgate.HolderStillWriting)
	}
	return fmt.Sprintf("CAPTF may delete this lock Lease itself, without a Job (%s): %s", x.Path, x.When)
}

func (d *Decision) step(check, observed, result string) {
	// A backstop: what a step quotes of the holder's is Quoted already,
	// but an error may quote it too (runner.OwnsPod's).
	d.Steps = append(d.Steps, v1alpha1.Step{Check: check, Observed: cut(observed, maxStep), Result: result})
}

// done records the verdict. Labels that disagree with the Lease's name end
// the reason as a warning: shown wherever the reason is, never acted on.
func (d *Decision) done(f Facts, v v1alpha1.Verdict, reason string) Decision {
	if d.DeletesLease = d.leaseDeletion(f); d.DeletesLease != nil && f.Lease.Held {
		reason += "; " + DeletionSentence(d.DeletesLease)
	}
	for _, w := range f.Warnings {
		reason += "; warning: " + w
	}
	d.Verdict, d.Reason, d.Case = v, reason, caseOf(f, v)
	return *d
}

// State describes a pod's phase, noting a pending deletion.
func (p *Pod) State() string {
	s := string(p.Phase)
	switch p.Phase {
	case "":
		s = "in no phase yet"
	case corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown:
	default:
		// The API takes any phase: whoever may write a pod's status
		// chooses it (review-prose m3).
		s = "in phase " + Quoted(s)
	}
	if p.Terminating {
		s += " and terminating"
	}
	return s
}
