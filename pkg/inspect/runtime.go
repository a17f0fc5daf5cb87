package inspect

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
	"github.com/captf-io/kubectl-captf/pkg/shell"
)

// Runtime is what the steps of CAPTF's next Job meet once the Job runs,
// as far as the object shows it: CAPTF's runner runs init, then
// force-unlock -force <ID> (internal/runner/plan.go Steps at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517), so a Job that CAPTF starts
// clears the lock only if its pod reaches those steps and the runtime's
// init and Unlock succeed. docs/how-it-decides.md names the runtime
// files and commits; test/e2e replays the steps with the real binaries.
type Runtime struct {
	// StateStatus and StateReason are the object's StateReadable
	// condition, "" when it has none.
	StateStatus, StateReason string
	// StateMessage is that condition's message, which for StateCorrupt
	// is the error of CAPTF's read ("state: unsupported state file
	// version: 3"), cut to maxMessage characters.
	StateMessage string
	// StateSecrets is whether a Secret of the state selector exists:
	// Unread where the plugin could not list them (it lists them for an
	// object being deleted and for the owner of a held lock).
	StateSecrets jobgate.Presence
	// ListWhy is why the state Secrets could not be listed, "" where they
	// were or were not asked for.
	ListWhy string
	// Secrets is the metadata of the state Secrets, where listed.
	Secrets []metav1.ObjectMeta
	// Suffix is the object's state suffix; BackendLabels the labels map
	// CAPTF passes the backend for it (BackendLabels), nil where the
	// object names no Cluster.
	Suffix        string
	BackendLabels map[string]string
	// NoSteps is the ApplyJobSucceeded condition ("False/ImagePullFailed")
	// that says CAPTF's Jobs end before their steps; "" for none.
	// DriftNoSteps and RestoreNoSteps are DriftJobSucceeded and
	// RestoreJobSucceeded False/ImagePullFailed: the drift and refresh
	// Jobs', or the restore Job's, image cannot be pulled and no other is
	// left to try (Blocked says which Job they stop).
	NoSteps, DriftNoSteps, RestoreNoSteps string
	// NoStepsOp is the op of the Job whose image ApplyJobSucceeded's
	// NoSteps names, read from its message ("Job <name> …", CAPTF's
	// namesJob); "" where the message names none.
	NoStepsOp string
	// RestoreFailed is whether RestoreJobSucceeded is False/RestoreFailed.
	RestoreFailed bool
	// Deleting is whether the object is being deleted: its next Job is
	// its destroy, never a drift or refresh Job.
	Deleting bool
	// Waits are the conditions ("ApplyJobSucceeded Unknown/WaitingForJobSlot")
	// that say CAPTF's next Job waits before it is created.
	Waits []string
	// Tried is the newest Job of the object's that CAPTF created to
	// force-unlock the lock and that failed with the lock still held
	// (triedJob); nil for none, or where the Jobs were not read.
	Tried *TriedJob
}

// noStepsReasons are the ApplyJobSucceeded False reasons of a Job whose
// pod never ran the runner's steps: its image could not be pulled, or
// its layout is not a runner's (api/v1alpha1/conditions_consts.go at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517).
var noStepsReasons = map[string]string{
	"ImagePullFailed": "the runner image could not be pulled",
	"ImageInvalid":    "the runner image's layout is invalid",
}

// waitReasons are the Unknown reasons with which CAPTF says that the
// next Job waits for something that ends by itself: a Job slot
// (shared/slots.go takeJobSlot at 5150d7d990bae8cd86fedda58ae5122c571ca087),
// the object's run lease (internal/runlease/runlease.go Free), the
// cluster operation lease between a cluster and its machines.
var waitReasons = map[string]string{
	"WaitingForJobSlot":           "a Job slot (--max-active-jobs or the cluster's spec.maxActiveJobs; drift and refresh only below 80 % of it)",
	"WaitingForRunLease":          "its run lease, held by another live Job",
	"WaitingForClusterOperation":  "its TerraformCluster's apply or destroy",
	"WaitingForMachineOperations": "its machines' and pools' applies and destroys",
}

// RuntimeOf reads what Runtime needs from the object ref, u, and from
// what was read of its state Secrets.
func RuntimeOf(ref object.Ref, u *unstructured.Unstructured, st StateRead) Runtime {
	rt := Runtime{StateSecrets: st.Presence, ListWhy: st.Why, Secrets: st.Secrets, Suffix: ref.Suffix()}
	if c := ClusterNameOf(ref.Kind, u); c != "" {
		rt.BackendLabels = BackendLabels(ref, c)
	}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range list {
		m, _ := raw.(map[string]any)
		str := func(k string) string { s, _ := m[k].(string); return s }
		typ, status, reason := str("type"), str("status"), str("reason")
		switch {
		case typ == "StateReadable":
			rt.StateStatus, rt.StateReason, rt.StateMessage = status, reason, cut(str("message"), maxMessage)
		case typ == "ApplyJobSucceeded" && status == "False" && noStepsReasons[reason] != "":
			rt.NoSteps = status + "/" + reason
			rt.NoStepsOp = jobOpOf(str("message"))
		case typ == "DriftJobSucceeded" && status == "False" && reason == "ImagePullFailed":
			rt.DriftNoSteps = status + "/" + reason
		case typ == "RestoreJobSucceeded" && status == "False" && reason == "ImagePullFailed":
			rt.RestoreNoSteps = status + "/" + reason
		}
		if status == "Unknown" && waitReasons[reason] != "" &&
			(typ == "ApplyJobSucceeded" || typ == "DriftJobSucceeded" || typ == "RestoreJobSucceeded") {
			rt.Waits = append(rt.Waits, fmt.Sprintf("%s %s/%s: %s", typ, status, reason, waitReasons[reason]))
		}
	}
	rt.RestoreFailed = RestoreFailed(u)
	rt.Deleting = u.GetDeletionTimestamp() != nil
	if !ReadsStateSecrets(u) {
		rt.StateSecrets, rt.ListWhy, rt.Secrets = jobgate.Unread, "", nil
	}
	return rt
}

// ReadsStateSecrets is whether the decision of a lock owned by u uses
// u's state Secrets' metadata, so whether a read lists it: for an object
// being deleted, CAPTF's deletion reads them; for a live one, where
// CAPTF last recorded StateReadable True (a state deleted since, or
// labelled otherwise than CAPTF's backend labels, is what no condition
// says), or False/StateLost or ApplyOutcomeUnknown, which cover a
// missing Secret and a present one alike (StateLost: "is missing, or
// carries no inputs hash for an immutable kind", conditions_consts.go at
// c9597b2aebc31919344aa6c2d5cdd15427127855), or Unknown/StateNotFound,
// which CAPTF's readState writes when it found no Secret and keeps until
// its next pass: a first apply's init writes the empty state Secret
// before its apply takes the lock (backend_state.go StateMgr), so a pod
// killed there leaves a stale lock next to a state the next init reads.
// Its other reasons say what CAPTF found of its state, and NoState
// follows them.
func ReadsStateSecrets(u *unstructured.Unstructured) bool {
	if u.GetDeletionTimestamp() != nil {
		return true
	}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range list {
		m, _ := raw.(map[string]any)
		if m["type"] == "StateReadable" {
			return m["status"] == "True" || (m["status"] == "False" && (m["reason"] == "StateLost" || m["reason"] == "ApplyOutcomeUnknown")) ||
				(m["status"] == "Unknown" && m["reason"] == "StateNotFound")
		}
	}
	return false
}

// NoState is whether the object has no state for the runtime to read,
// and the evidence. With no state, the kubernetes backend of terraform
// and OpenTofu locks the state in StateMgr to write an empty one
// (internal/backend/remote-state/kubernetes/backend_state.go); while
// another lock is held that fails at once, so init fails and the
// force-unlock step never runs. The state Secrets' metadata decide where
// they were listed (a Secret deleted after CAPTF recorded StateReadable
// True is gone for the runtime too); else StateReadable, which needs no
// Secret access.
func (rt Runtime) NoState(suffix string) (bool, string) {
	cond := fmt.Sprintf("StateReadable %s/%s", rt.StateStatus, rt.StateReason)
	switch {
	case rt.StateSecrets == jobgate.Present && len(rt.Secrets) > 0 && !rt.hasBase(suffix):
		// CAPTF's reader takes any Secret of the selector for state
		// (StateInconsistent only on its next pass); both runtimes read
		// the base by its name (OpenTofu's Get), terraform v1.11.4's init
		// crashes on chunks without it (the runner replay's row 1c).
		return true, "no state Secret of suffix " + suffix + " is the base Secret " + object.StateSecretName("default", suffix) + " the runtime reads (" + rt.secretNames() + " only; terraform v1.11.4 was seen to crash in init on chunks without a base)"
	case rt.StateSecrets == jobgate.Present:
		return false, ""
	case rt.StateSecrets == jobgate.Absent && rt.StateStatus == "True":
		// Deleted since CAPTF last read it: CAPTF's next reconcile finds
		// no state, and whichever Job it then starts runs init first.
		return true, "no state Secret of suffix " + suffix + " exists, though CAPTF last recorded " + cond + ": it was deleted since"
	case rt.StateSecrets == jobgate.Absent && rt.StateReason == "StateNotFound":
		return true, "no state Secret of suffix " + suffix + " exists: its state was never written (" + cond + ")"
	case rt.StateSecrets == jobgate.Absent:
		return true, "no state Secret of suffix " + suffix + " exists"
	case rt.StateStatus == "Unknown" && rt.StateReason == "StateNotFound":
		return true, "its state was never written (" + cond + ")"
	}
	return false, ""
}

// hasBase is whether the listed state Secrets hold the base Secret
// tfstate-default-<suffix>, the one both runtimes' Get reads by name.
func (rt Runtime) hasBase(suffix string) bool {
	for _, s := range rt.Secrets {
		if s.Name == object.StateSecretName("default", suffix) {
			return true
		}
	}
	return false
}

// secretNames are the listed state Secrets' names, comma-separated, the
// first maxNames of them (someNames).
func (rt Runtime) secretNames() string {
	names := make([]string, len(rt.Secrets))
	for n, s := range rt.Secrets {
		names[n] = s.Name
	}
	return someNames(names, ", ")
}

// maxMessage is how many characters of a condition's message a reason quotes:
// whoever may write the object's status chooses it.
const maxMessage = 200

// maxNames is how many Secret names a reason lists: anyone who may
// create Secrets in the namespace can label a thousand as state, and a
// reason is printed on every lock line and in explain (review26d m5).
const maxNames = 5

// someNames joins the first maxNames of names with sep, and says how
// many more there are.
func someNames(names []string, sep string) string {
	if len(names) <= maxNames {
		return strings.Join(names, sep)
	}
	return fmt.Sprintf("%s%sand %d more", strings.Join(names[:maxNames], sep), sep, len(names)-maxNames)
}

// MaybeNoState is, for a StateLost or ApplyOutcomeUnknown whose state
// Secrets could not be listed, the text that says both cases: CAPTF
// writes StateLost for a missing state Secret and for one without the
// inputs hash annotation of an immutable kind, and with the Secret
// present the runtime's init reads it and a restore's force-unlock
// clears the lock. "" where the Secrets were listed or the reason is
// another.
func (rt Runtime) MaybeNoState() string {
	if rt.StateSecrets != jobgate.Unread || rt.StateStatus != "False" || (rt.StateReason != "StateLost" && rt.StateReason != "ApplyOutcomeUnknown") {
		return ""
	}
	why := "its state Secrets could not be listed"
	if rt.ListWhy != "" {
		why += " (" + rt.ListWhy + ")"
	}
	return fmt.Sprintf("StateReadable %s/%s covers a state Secret that is missing and one that is present (StateLost: without the %s annotation of an immutable kind), and %s to tell which: if it is missing, the restore's init fails on this lock and its force-unlock step never runs; if it is present, the restore's init reads it and its force-unlock clears the lock", rt.StateStatus, rt.StateReason, InputsHashAnnotation, why)
}

// UnlistedText says, where the state Secrets were asked for and could
// not be listed (the read-only role does not grant it), what a clear
// then rests on: CAPTF's StateReadable, which reads the state by suffix
// and workspace only (internal/state/labels.go Selector), so a state the
// runtime's init fails on may stay StateRead (review26h m5); "" else. The clear is
// still said: StateReadable True is CAPTF's own read, and a Job that
// fails to clear it is seen as StaleTried (review26g F10).
func (rt Runtime) UnlistedText() string {
	if rt.StateSecrets != jobgate.Unread || rt.ListWhy == "" {
		return ""
	}
	return "the plugin could not check its state Secrets (" + rt.ListWhy + "), so this rests on CAPTF's StateReadable, which does not see what stops the runtime's init: a state Secret deleted since CAPTF's last read, or state Secrets whose labels are not the ones CAPTF passes the backend or that are split into -part-N Secrets, which CAPTF reads and terraform or OpenTofu may not"
}

// LabelManagedBy is the label the kubernetes backend of terraform and
// OpenTofu writes on its state Secrets and Leases, "terraform".
const LabelManagedBy = "app.kubernetes.io/managed-by"

// InputsHashAnnotation is the annotation with which CAPTF records the
// inputs hash of the last successful apply on the base state Secret
// (internal/state/labels.go at 16ca67d3711e1eb42cfbf3acd89c0d42f6970517).
const InputsHashAnnotation = "captf.io/inputs-hash"

// Relabeled names the labels of the map CAPTF passes the backend that a
// state Secret lacks or carries with another value, "" for none (or
// where the Secrets were not listed, or the object names no Cluster).
// terraform lists the state with a selector of that whole map (CAPTF's
// own comment on state.BackendLabels), so such a Secret is no state to
// it; OpenTofu reads the base Secret by its name.
func (rt Runtime) Relabeled() string {
	if rt.BackendLabels == nil {
		return ""
	}
	// The runtime's own getLabels adds managed-by=terraform to the map
	// (opentofu v1.12.6 client.go getLabels; terraform v1.11.4's, as the
	// runner replay's row 8 shows).
	want := maps.Clone(rt.BackendLabels)
	want[LabelManagedBy] = "terraform"
	var out []string
	for _, s := range rt.Secrets {
		var diff []string
		for _, k := range sortedKeys(want) {
			who := "CAPTF passes"
			if _, ok := rt.BackendLabels[k]; !ok {
				who = "the runtime's selector requires"
			}
			if v, ok := s.Labels[k]; !ok {
				diff = append(diff, fmt.Sprintf("%s (missing; %s %q)", k, who, want[k]))
			} else if v != want[k] {
				diff = append(diff, fmt.Sprintf("%s=%q (%s %q)", k, v, who, want[k]))
			}
		}
		if len(diff) > 0 {
			out = append(out, s.Name+": "+strings.Join(diff, ", "))
		}
	}
	return someNames(out, "; ")
}

// RelabeledText says what each runtime does with state Secrets whose
// labels are not the ones CAPTF passes.
func RelabeledText(diff string) string {
	return "its state Secrets do not carry the labels CAPTF passes the backend (" + diff + "): with a Terraform image, init lists the state with a selector of those labels, finds none, locks the state to write an empty one and fails on this lock, so the force-unlock step never runs; with an OpenTofu image, init reads the base Secret by its name and the force-unlock clears the lock, unless the state is split across -part-N Secrets, which OpenTofu's init cannot read; CAPTF records nothing of which runtime its image holds (the image's /captf/runtime; its io.captf.runtime label is metadata the runner never reads), so whether the next Job clears it depends on the image"
}

// Chunked names the listed state Secrets past the base, the -part-N
// chunks terraform writes for a state larger than one Secret holds
// (CAPTF's reader orders them: internal/state/reader.go at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517), the first maxNames of them
// (someNames), "" for none or where the Secrets were not listed.
func (rt Runtime) Chunked(suffix string) string {
	var out []string
	for _, s := range rt.Secrets {
		if strings.HasPrefix(s.Name, object.StateSecretName("default", suffix)+"-part-") {
			out = append(out, s.Name)
		}
	}
	return someNames(out, ", ")
}

// ChunkGap is, where the listed state Secrets' names are ones CAPTF's
// next read refuses (jobgate.ChunkSet's StateInconsistent: a missing
// chunk, a name that is no chunk; it holds the state, and only a restore
// starts), why; "" else, and where the base Secret is missing, which is
// no state to the runtime (NoState).
func (rt Runtime) ChunkGap(suffix string) string {
	if reason, why := jobgate.ChunkSet(rt.Secrets, suffix); reason == "StateInconsistent" && rt.hasBase(suffix) {
		return why
	}
	return ""
}

// ChunkGapText says what each runtime's init does with state Secrets
// whose names CAPTF's reader refuses (why, ChunkGap). terraform lists
// them all and indexes them by the number after their last "-", a name
// without one at 0 (client.go Get at v1.11.4,
// 35645b8fca68ff7e0b8785a3b563724a529a0caf): a missing chunk crashes its
// init (index out of range), another name may leave it without the
// state, and then it fails on this lock; OpenTofu reads the base alone
// (review26h m4, review26i F3; measured with terraform v1.11.4 and
// OpenTofu v1.12.6).
func ChunkGapText(why string) string {
	tf := "with a Terraform image, init orders them by the number after their last \"-\", which such a name upsets: it may read no state and fail on this lock, or read one, so whether its force-unlock step runs is not known"
	if strings.Contains(why, "is missing") {
		tf = "with a Terraform image, init crashes on the gap (index out of range) and the force-unlock step never runs"
	}
	return "its state Secrets' names are not the chunks CAPTF's reader accepts (" + why + "): " + tf + "; with an OpenTofu image, init reads the base Secret alone and the force-unlock clears the lock only where the base holds the whole state; CAPTF records nothing of which runtime its image holds, so whether the restore clears it depends on the image"
}

// ChunkedText says what each runtime does with a state that has
// -part-N Secrets in an order CAPTF's reader accepts. terraform lists
// every Secret of its selector and reads them in order, ignoring what
// follows a complete gzip stream, so its init reads a state split across
// them and a whole base with chunks left over from a larger state alike
// (client.go Get and uncompressState at
// 35645b8fca68ff7e0b8785a3b563724a529a0caf, v1.11.4). OpenTofu reads the
// base Secret alone by its name and decodes its tfstate as the whole
// gzip stream (opentofu v1.12.6 client.go Get), so its init reads left
// over chunks' base and fails on a state really split across them.
// Which op runs which image also differs (shared/run.go ChooseImage:
// spec.source.image for apply and plan, the pinned digest for the
// others). Rows 1i (split, replayed: terraform clears, OpenTofu's init
// fails) and 1q (left over, replayed: both clear).
func ChunkedText(chunks string) string {
	return "its state has -part-N Secrets (" + chunks + "): with a Terraform image, init reads the base Secret and its chunks, a state split across them and a whole base with chunks left over from a larger state alike, and the force-unlock clears the lock; with an OpenTofu image, init reads the base Secret alone, which holds the whole state only where the chunks are left over: a state split across them it cannot decode, so init fails and the force-unlock step never runs; which of the two it is, the Secrets' metadata does not say, and CAPTF records nothing of which runtime its image holds (and runs spec.source.image for apply and plan, the pinned digest for the other ops), so whether the next Job clears it depends on the image"
}

// FlagID is, for a lock ID CAPTF's force-unlock step cannot pass as it
// means to, the text that says so, else "". CAPTF passes the ID in the
// runner container's args (--force-unlock=<ID>, internal/jobs/spec.go
// args at d6986f4646de003dbde2b12ec279505307a1b667) and then bare after
// -force (internal/runner/plan.go Steps at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517). Go's flag package reads any
// argument of two characters or more that begins with "-" as a flag
// ("--" ends the flags), so the step fails with "flag provided but not
// defined" or with a missing LOCK_ID, neither of which CAPTF's runner
// accepts. And no process takes an argument holding a NUL byte, or one
// of MaxArg bytes or more (Linux's MAX_ARG_STRLEN, its terminating NUL
// included): the container, or the step, never starts (review26g F4).
func FlagID(id string) string {
	switch {
	case len(FlagForceUnlock)+len(id)+1 > MaxArg:
		return fmt.Sprintf("the ID CAPTF passes to force-unlock is %d bytes long: no process takes an argument of %d bytes or more (Linux's MAX_ARG_STRLEN), so neither the runner container, given --force-unlock=<ID>, nor its force-unlock step can start, every Job CAPTF starts fails and the lock stays", len(id), MaxArg)
	case strings.IndexByte(id, 0) >= 0:
		return fmt.Sprintf("the ID CAPTF passes to force-unlock, %q, holds a NUL byte, which no process argument can: neither the runner container, given --force-unlock=<ID>, nor its force-unlock step can start, every Job CAPTF starts fails and the lock stays", cut(id, maxReason))
	case len(id) < 2 || id[0] != '-':
		return ""
	}
	said := fmt.Sprintf("the ID CAPTF passes to force-unlock -force, %q, begins with \"-\": terraform and OpenTofu parse it as a flag (\"flag provided but not defined\", a bad value for -force, or no LOCK_ID left)", cut(id, maxReason))
	if strings.Contains(id, "state is already unlocked") || strings.Contains(id, "does not match existing lock") {
		// The flag error may quote the ID, and with it an answer the
		// runner accepts: Go's flag package quotes the flag's name or a
		// bad value for -force, terraform prints it whole, OpenTofu wraps
		// it at 78 columns (review26g F5, review26h m3; row 7d).
		return said + ", and their error may quote it, with an answer CAPTF's runner accepts (\"state is already unlocked\" or \"does not match existing lock\"): where it does (terraform prints the error whole; OpenTofu wraps it at 78 columns, which may split the answer) the runner takes the failed step for a success and the Job fails later, at its first step that takes the lock; either way the lock stays"
	}
	return said + ", so the force-unlock step of every Job CAPTF starts fails with an error CAPTF's runner does not accept, the Job fails and the lock stays"
}

// RunnerTail is how much of a step's stderr CAPTF's runner keeps and
// searches, case-sensitively, for the answers it accepts ("state is
// already unlocked", "does not match existing lock"): its last 64 KiB
// (internal/runner/exec.go MaxTail, tailWriter and StepResult.Failed at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517).
const RunnerTail = 64 << 10

// MismatchHidden is whether the runtime's "does not match existing lock"
// answer to the force-unlock of l's info ID may escape CAPTF's runner:
// terraform prints the lock info after it (Lease.Printed bytes;
// statemgr.LockError), which pushes it out of the runner's RunnerTail,
// and OpenTofu prefixes every line it prints and drops an output line of
// 64 KiB or more (its diagnostic printer's bufio.Scanner), the answer's
// own line among them when the ID it quotes is that long (review26g F5,
// review26h m2; measured with terraform v1.11.4 and OpenTofu v1.12.6:
// row 2c). A kibibyte of margin covers the text around them.
func MismatchHidden(l Lease) bool {
	return l.Info != nil && (max(l.Printed, l.TofuPrinted) > RunnerTail-1024 || len(strconv.Quote(l.Info.ID)) > RunnerTail-1024)
}

// tofuLinePrefix is about what OpenTofu's diagnostic printer adds to each
// line it prints: a coloured "│ " (review26h m2: 4,000 newlines in Info
// made its stderr 72,567 bytes).
const tofuLinePrefix = 20

// MismatchText is what CAPTF's Jobs do with the lock l whose info ID
// differs from holderIdentity: their force-unlock misses, whether or not
// the runner sees the answer (MismatchHidden), and the lock stays.
func MismatchText(l Lease) string {
	if !MismatchHidden(l) {
		return fmt.Sprintf("every Job CAPTF starts force-unlocks %s, the backend answers \"does not match existing lock\", the runner counts that as success and the lock stays", Named(l.Info.ID))
	}
	return fmt.Sprintf("every Job CAPTF starts force-unlocks %s and the backend answers \"does not match existing lock\" with %d bytes of lock info, which may hide that answer from CAPTF's runner: it searches only the last 64 KiB of the step's stderr, terraform prints the lock info after the answer, and OpenTofu prefixes each of its lines and drops one of 64 KiB or more; where the runner does not see it the step and the Job fail at once; either way the lock stays", Named(l.Info.ID), max(l.Printed, l.TofuPrinted))
}

// MaxArg is the most bytes one argument of a Linux process may take, its
// terminating NUL included (MAX_ARG_STRLEN, 32 pages of 4 KiB).
const MaxArg = shell.MaxArg

// MaybeNoBase is whether the state may lack the base Secret the runtime
// reads: StateInconsistent covers chunks without their base, which the
// runtime reads as no state.
func (rt Runtime) MaybeNoBase() bool {
	return rt.StateSecrets != jobgate.Absent && rt.StateStatus == "False" && rt.StateReason == "StateInconsistent"
}

// WaitText says what the next Job waits for, "" for nothing.
func (rt Runtime) WaitText() string {
	if len(rt.Waits) == 0 {
		return ""
	}
	return "it waits first for " + strings.Join(rt.Waits, "; and for ") + ", which delays the clear and does not stop it"
}

// Blocked is the condition that says next, the kind of Job the gate
// names (Gate.NextOp, "" where it names none), ends before its steps: ApplyJobSucceeded for
// any Job; DriftJobSucceeded for a drift or refresh Job, or an unnamed
// one of a live object (a deletion runs neither: review26d m1), and
// RestoreJobSucceeded for the restore. CAPTF's pullStuck tries
// no other image for an apply or plan, and for a destroy, refresh,
// drift or restore Job only while one is left; with none left it
// writes ImagePullFailed on the op's own condition and leaves the Job
// to its activeDeadlineSeconds (shared/pullfallback.go at
// 4b3ba278faff2ad1a0d02cd1a5329583a79a9d1c and, for apply and plan, at
// 3c7bece452eae4847057ed970df575366e64588b, pullStuck and pullFailed).
// With none left, the image that failed is most often spec.source.image
// itself or one already recorded as unpullable, so no other op is
// counted on to run. "" for none.
func (rt Runtime) Blocked(next jobgate.Op) string {
	switch {
	case rt.NoSteps != "" && !rt.pinnedRuns(next):
		return "ApplyJobSucceeded " + rt.NoSteps
	case rt.RestoreNoSteps != "" && next == jobgate.OpRestore:
		return "RestoreJobSucceeded " + rt.RestoreNoSteps
	case rt.DriftNoSteps != "" && (next == jobgate.OpRefresh || (next == "" && !rt.Deleting)):
		return "DriftJobSucceeded " + rt.DriftNoSteps
	}
	return ""
}

// jobOpOf is the op of the runner Job a condition's message names at
// its start ("Job <name> …", as CAPTF's bookkeeping and pull fallback
// write it: shared/bookkeeping.go namesJob at
// 148aa21efa139ad15203df93fb94de9c6b88260e), "" where it names none.
func jobOpOf(message string) string {
	rest, ok := strings.CutPrefix(message, "Job ")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, " ")
	p, err := runner.ParseJobName(strings.TrimRight(name, ",:;."))
	if err != nil {
		return ""
	}
	return p.Op
}

// pinnedRuns is whether the Job next, a destroy or a restore, runs
// another image than the apply or plan whose image ApplyJobSucceeded says
// failed: apply and plan run spec.source.image alone, a destroy or
// restore the image CAPTF pinned for the object first (the durable inputs
// Secret's captf.io/image-digest, then its recorded image), skipping the
// images it recorded as unpullable within the hour (shared/run.go
// ImageCandidates, ChooseImage at
// 81a0ff422f986130946f62ca8e093aeff3e5fc2c; internal/inputs/unpullable.go
// at df0d90703a0fd97f1274b924960843a05ee436b2) (review26g F11).
func (rt Runtime) pinnedRuns(next jobgate.Op) bool {
	switch {
	case rt.NoSteps == "":
		return false
	case rt.NoStepsOp == "apply" || rt.NoStepsOp == "plan":
		return next == jobgate.OpDestroy || next == jobgate.OpRestore
	}
	// A destroy tried the pinned images and its own override; a restore
	// tries spec.source.image too (review26h n1).
	return rt.NoStepsOp == "destroy" && next == jobgate.OpRestore
}

// PinnedText is, where the next Job runs the pinned image rather than
// the one that failed (pinnedRuns), what that leaves open: whether that
// image pulls and runs (the same registry, or a missing pull secret, may
// stop it too), which nothing read says. "" else.
func (rt Runtime) PinnedText(next jobgate.Op) string {
	if !rt.pinnedRuns(next) {
		return ""
	}
	if rt.NoStepsOp == "destroy" {
		return fmt.Sprintf("ApplyJobSucceeded %s is of a destroy Job, which ran out of the images it tries; the restore Job tries spec.source.image too, so it reaches its init and force-unlock steps if one of its images pulls and runs, which nothing the plugin reads says", rt.NoSteps)
	}
	return fmt.Sprintf("ApplyJobSucceeded %s is of %s Job, which runs spec.source.image; the %s Job runs the image CAPTF pinned for the object first (its durable inputs Secret's captf.io/image-digest, else its recorded image), so it reaches its init and force-unlock steps if that image pulls and runs, which nothing the plugin reads says (the same registry, or a missing pull secret, may stop it too)", rt.NoSteps, article(rt.NoStepsOp), next)
}

// article is op with its indefinite article ("an apply").
func article(op string) string {
	if strings.IndexByte("aeiou", op[0]) >= 0 {
		return "an " + op
	}
	return "a " + op
}

// NoStepsText says why CAPTF's Jobs end before their steps, next being
// the kind of Job the gate names (Blocked).
func (rt Runtime) NoStepsText(next jobgate.Op) string {
	const never = "a Job whose pod cannot run the image never reaches its init and force-unlock steps"
	switch cond := rt.Blocked(next); {
	case strings.HasPrefix(cond, "DriftJobSucceeded") && next == "":
		return fmt.Sprintf("the module image of its drift and refresh Jobs could not be pulled and CAPTF has no other image left to try (%s): whether its next Job is one of them is not known; if it is, it ends at activeDeadlineSeconds, and %s", cond, never)
	case strings.HasPrefix(cond, "DriftJobSucceeded"):
		return fmt.Sprintf("the module image of its drift and refresh Jobs could not be pulled and CAPTF has no other image left to try (%s): those Jobs end at activeDeadlineSeconds, and %s, until that image can be pulled or CAPTF has another to try", cond, never)
	case strings.HasPrefix(cond, "RestoreJobSucceeded"):
		return fmt.Sprintf("the module image of its restore Job could not be pulled and CAPTF has no other image left to try (%s): the restore ends at activeDeadlineSeconds, and %s", cond, never)
	case cond != "":
		return fmt.Sprintf("%s (%s): %s", noStepsReasons[strings.TrimPrefix(rt.NoSteps, "False/")], cond, never)
	}
	return ""
}

// RunLeaseName is CAPTF's run lease of the object with state suffix
// suffix (internal/runlease/runlease.go RunName).
func RunLeaseName(suffix string) string { return "captf-run-" + suffix }

// NextJob names the Job that would start for an object without state:
// a restore the gate names, else, for a state never written, the first
// apply (decide.go: NoState comes before any drift or refresh), else the
// gate's.
func NextJob(g *jobgate.Gate, rt Runtime) string {
	switch {
	case g != nil && g.NextOp == jobgate.OpRestore:
		return g.Next
	case rt.StateReason == "StateNotFound":
		return "the first apply"
	case rt.StateSecrets == jobgate.Absent && rt.StateStatus == "True":
		// The gate follows conditions written while the state existed.
		return "its next Job"
	case g != nil && g.Next != "":
		return g.Next
	}
	return "its next Job"
}

// NoStateText is what happens with no state to the Job next, which it
// names (NextJob of g and rt). A failed restore is not retried for the same serial: CAPTF's
// procedure (RestoreFailedReason, api/v1alpha1/conditions_consts.go at
// c9597b2aebc31919344aa6c2d5cdd15427127855) is to remove the annotation,
// wait for status.lastRestoredSerial to clear, and set it again; where
// RestoreJobSucceeded is already False/RestoreFailed, nothing proceeds
// by itself after the unlock.
func NoStateText(g *jobgate.Gate, rt Runtime) string {
	next := NextJob(g, rt)
	s := next + " runs init first, and with no state the kubernetes backend of terraform and OpenTofu locks the state itself to write an empty one; that fails at once while this lock is held (\"the state is already locked by another … client\"), so init fails and the force-unlock step never runs, on every retry alike (each Job still emits ForceUnlocked)"
	switch {
	case rt.RestoreFailed:
		return s + ": unlock it; the restore already failed (RestoreJobSucceeded False/RestoreFailed) and CAPTF does not retry it for the same serial, so after the unlock " + RestoreRetry
	case g != nil && g.NextOp == jobgate.OpRestore:
		return s + ": unlock it, and the restore proceeds; if it already failed, CAPTF does not retry it for the same serial: " + RestoreRetry
	}
	return s + ": unlock it, and " + strings.Replace(next, "its ", "the ", 1) + " proceeds"
}

// RestoreRetry is CAPTF's procedure to ask again for a restore that
// failed (RestoreFailedReason).
const RestoreRetry = "remove the captf.io/restore-state annotation, wait until status.lastRestoredSerial is cleared, and set the annotation again"

// RestoreFailed is whether the object's RestoreJobSucceeded is
// False/RestoreFailed.
func RestoreFailed(u *unstructured.Unstructured) bool {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range list {
		m, _ := raw.(map[string]any)
		if m["type"] == "RestoreJobSucceeded" {
			return m["status"] == "False" && m["reason"] == "RestoreFailed"
		}
	}
	return false
}

// UnreadableState is, where the next Job is the restore asked for, the
// StateReadable condition ("StateReadable False/StateCorrupt") that says
// its init cannot read the state either: CAPTF's restore runs init, then
// force-unlock, then state push -force of the backup, which it writes to
// a local file only (internal/runner/plan.go Steps at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517, internal/runner/restore.go
// AssembleRestore at 1176786fc9c7a60c57ffb2d5252c227fcc54ac91), so init
// reads the Secret CAPTF could not, and terraform and OpenTofu fail on a
// payload that is no gzip, a cut one, JSON that does not parse, or
// OpenTofu's encryption envelope, which CAPTF's root gives no key
// (render.BackendRoot; runnerOwned drops TF_ENCRYPTION). "" else, and
// for a StateCorrupt whose message (the error of CAPTF's read,
// internal/state/reader.go parse at 16ca67d3) names what only CAPTF
// refuses (stateLimit): its restore may clear the lock (review26h m1).
func (rt Runtime) UnreadableState(next jobgate.Op) string {
	if next != jobgate.OpRestore || rt.StateStatus != "False" || (rt.StateReason != "StateCorrupt" && rt.StateReason != "StateEncrypted") || rt.stateLimit() != "" {
		return ""
	}
	return "StateReadable False/" + rt.StateReason
}

// stateLimit is, for a StateCorrupt whose message names a refusal of
// CAPTF's own reader that the runtimes read past, what terraform and
// OpenTofu do with it; "" else. Measured with terraform v1.11.4 and
// OpenTofu v1.12.6 (review26h m1; row 9b): a state file of format version
// 1 to 3, which CAPTF's parse refuses (ErrUnsupportedStateVersion) and
// both runtimes upgrade; more than 32 state Secrets, which terraform
// reads in order and OpenTofu reads the base of; a state over CAPTF's
// 64 MiB; a gzip checksum that does not match, which terraform ignores
// and OpenTofu does not.
func (rt Runtime) stateLimit() string {
	if rt.StateStatus != "False" || rt.StateReason != "StateCorrupt" {
		return ""
	}
	m := rt.StateMessage
	switch {
	case strings.Contains(m, "unsupported state file version: 1") || strings.Contains(m, "unsupported state file version: 2") || strings.Contains(m, "unsupported state file version: 3"):
		if v := m[strings.Index(m, "version: ")+len("version: "):]; len(v) == 1 || !unicode.IsDigit(rune(v[1])) {
			return "CAPTF refuses a state file of that format version, which terraform and OpenTofu read and upgrade"
		}
	case strings.Contains(m, "state Secrets, more than"):
		return "CAPTF refuses more than 32 state Secrets, which terraform reads in order and OpenTofu reads the base of"
	case strings.Contains(m, "exceeds"):
		return "CAPTF refuses a state larger than its limit, which terraform reads"
	case strings.Contains(m, "invalid checksum"):
		return "CAPTF refuses a gzip checksum that does not match, which terraform reads past and OpenTofu does not"
	case strings.Contains(m, "cannot unmarshal"):
		// A field of a type CAPTF's decoder refuses, which the
		// runtimes' own state reader may not read at all (review26i F2:
		// "encryption_version":1 beside a plain state).
		return "CAPTF's decoder refuses the type of a field, which terraform's and OpenTofu's state readers may not read at all"
	case strings.Contains(m, "unexpected EOF"):
		// terraform ignores the gzip reader's error (uncompressState):
		// a stream cut in its trailer reads whole (review26i F2).
		return "CAPTF refuses a gzip stream cut short, which terraform reads where only its trailer is cut"
	}
	return ""
}

// StateLimitText is, where the restore is next and CAPTF's StateCorrupt
// names what only its own reader refuses (stateLimit), what the
// restore's init then does; "" else.
func (rt Runtime) StateLimitText(next jobgate.Op) string {
	l := rt.stateLimit()
	if next != jobgate.OpRestore || l == "" {
		return ""
	}
	return fmt.Sprintf("StateReadable False/StateCorrupt says %q: %s, so the restore's init may read it and its force-unlock clear the lock", rt.StateMessage, l)
}

// UnreadableStateText says what the restore of a state its init cannot
// read does (UnreadableState gives cond); the procedure to ask for it
// again where it already failed (rt.RestoreFailed).
func UnreadableStateText(cond string, rt Runtime) string {
	unless := ""
	if strings.HasSuffix(cond, "StateEncrypted") {
		// CAPTF's parse takes an encryption_version key for an envelope;
		// beside a plain state both runtimes read past it (review26i F2).
		unless = ", unless it is a plain state that only looks encrypted to CAPTF (an encryption_version key, which both read past)"
	}
	s := "the restore Job asked for runs init first, which reads the state CAPTF could not read (" + cond + "); terraform and OpenTofu fail on it too (\"Error loading state\"; CAPTF's restore configures no state encryption)" + unless + ", so its force-unlock step never runs and the restore fails (RestoreJobSucceeded False/RestoreFailed), which CAPTF does not retry for the same serial. Unlocking does not make the state readable: the restore proceeds once the lock is cleared and the unreadable state Secrets are repaired or removed (the restore replaces the state with its backup)"
	if rt.RestoreFailed {
		s += "; it already failed, so ask for it again: " + RestoreRetry
	}
	return s
}

// NoBaseText is the runtimes' answer to the two shapes of
// StateInconsistent without a readable base (CAPTF's
// internal/state/reader.go at 16ca67d3711e1eb42cfbf3acd89c0d42f6970517):
// chunks without their base Secret, and a base Secret without the
// tfstate key. OpenTofu reads the base alone and terraform's Get returns
// no state for a base without the key (both client.go Get), so each
// takes the lock to write an empty state, which fails as with no state;
// terraform v1.11.4 crashes in init on chunks without a base, as the
// runner replay saw.
const NoBaseText = "if the inconsistency is chunks without their base Secret tfstate-default-<suffix>, or a base Secret without its tfstate key, the restore's init fails (with no state to read, OpenTofu and terraform lock the state to write an empty one and fail on this lock; terraform v1.11.4 was seen to crash on chunks without a base) and its force-unlock step never runs; if it is a gap in the chunks' numbers, terraform's init crashes (index out of range) and OpenTofu's reads the base alone, clearing the lock only where the base holds the whole state"

// TriedText says what a Job that CAPTF created to force-unlock the lock
// id, and that failed with the lock still held, shows. It is evidence of
// that Job's outcome, not of its cause: whatever stopped it (an image
// that does not pull, which DriftJobSucceeded stops saying once the Job
// reaches its deadline; a step that failed) stops the next Job too
// unless it has changed, and the next Job may run another image
// (ChooseImage), so the text does not claim more.
func TriedText(t *TriedJob, id string) string {
	ran := ","
	if t.Image != "" {
		ran = ", running " + t.Image + ","
	}
	return fmt.Sprintf("its %s Job %s%s which CAPTF created to force-unlock it (--force-unlock=%s), %s and the lock is still held: that Job's pod never reached its force-unlock step (an image that did not pull, a container that could not start), or that step did not clear it; whether CAPTF's next Job clears it depends on what stopped that one (its conditions and events, and its pod's, say what), and the next Job may run another image", t.Op, t.Name, ran, Named(id), t.Outcome)
}
