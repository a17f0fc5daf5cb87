package inspect

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/captf-io/kubectl-captf/pkg/jobgate"
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
	// StateSecrets is whether a Secret of the state selector exists:
	// Unread where the plugin could not list them (it lists them for an
	// object being deleted and for the owner of a held lock).
	StateSecrets jobgate.Presence
	// NoSteps is the ApplyJobSucceeded condition ("False/ImagePullFailed")
	// that says CAPTF's Jobs end before their steps; "" for none.
	NoSteps string
	// Waits are the conditions ("ApplyJobSucceeded Unknown/WaitingForJobSlot")
	// that say CAPTF's next Job waits before it is created.
	Waits []string
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

// RuntimeOf reads what Runtime needs from the object and from whether
// its state Secrets were found.
func RuntimeOf(u *unstructured.Unstructured, secrets jobgate.Presence) Runtime {
	rt := Runtime{StateSecrets: secrets}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range list {
		m, _ := raw.(map[string]any)
		str := func(k string) string { s, _ := m[k].(string); return s }
		typ, status, reason := str("type"), str("status"), str("reason")
		switch {
		case typ == "StateReadable":
			rt.StateStatus, rt.StateReason = status, reason
		case typ == "ApplyJobSucceeded" && status == "False" && noStepsReasons[reason] != "":
			rt.NoSteps = status + "/" + reason
		}
		if status == "Unknown" && waitReasons[reason] != "" &&
			(typ == "ApplyJobSucceeded" || typ == "DriftJobSucceeded" || typ == "RestoreJobSucceeded") {
			rt.Waits = append(rt.Waits, fmt.Sprintf("%s %s/%s: %s", typ, status, reason, waitReasons[reason]))
		}
	}
	if !ReadsStateSecrets(u) {
		rt.StateSecrets = jobgate.Unread
	}
	return rt
}

// ReadsStateSecrets is whether the decision of a lock owned by u uses
// whether u's state Secrets exist, so whether a read lists their
// metadata: for an object being deleted, CAPTF's deletion reads them;
// for a live one, only where CAPTF last recorded StateReadable True. Its
// other StateReadable reasons say what CAPTF found of its state, and
// NoState follows them; the Secrets' absence adds what no condition
// says: a state deleted since CAPTF last read it.
func ReadsStateSecrets(u *unstructured.Unstructured) bool {
	if u.GetDeletionTimestamp() != nil {
		return true
	}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range list {
		m, _ := raw.(map[string]any)
		if m["type"] == "StateReadable" {
			return m["status"] == "True"
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
	case rt.StateSecrets == jobgate.Present:
		return false, ""
	case rt.StateSecrets == jobgate.Absent && rt.StateStatus == "True":
		// Deleted since CAPTF last read it: CAPTF's next reconcile finds
		// no state, and whichever Job it then starts runs init first.
		return true, "no state Secret of suffix " + suffix + " exists, though CAPTF last recorded " + cond + ": it was deleted since"
	case rt.StateSecrets == jobgate.Absent:
		return true, "no state Secret of suffix " + suffix + " exists"
	case rt.StateStatus == "Unknown" && rt.StateReason == "StateNotFound":
		return true, "its state was never written (" + cond + ")"
	case rt.StateStatus == "False" && (rt.StateReason == "StateLost" || rt.StateReason == "ApplyOutcomeUnknown"):
		return true, "its state Secret is missing (" + cond + ")"
	}
	return false, ""
}

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

// NoStepsText says why CAPTF's Jobs end before their steps.
func (rt Runtime) NoStepsText() string {
	reason := strings.TrimPrefix(rt.NoSteps, "False/")
	return fmt.Sprintf("%s (ApplyJobSucceeded %s): a Job whose pod cannot run the image never reaches its init and force-unlock steps", noStepsReasons[reason], rt.NoSteps)
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
	case g != nil && strings.Contains(g.Next, "restore"):
		return g.Next
	case rt.StateReason == "StateNotFound" && rt.StateSecrets != jobgate.Absent:
		return "the first apply"
	case rt.StateSecrets == jobgate.Absent && rt.StateStatus == "True":
		// The gate follows conditions written while the state existed.
		return "its next Job"
	case g != nil && g.Next != "":
		return g.Next
	}
	return "its next Job"
}

// NoStateText is what happens to the Job next (it names it) with no state.
func NoStateText(next string) string {
	s := next + " runs init first, and with no state the kubernetes backend of terraform and OpenTofu locks the state itself to write an empty one; that fails at once while this lock is held (\"the state is already locked by another … client\"), so init fails and the force-unlock step never runs, on every retry alike (each Job still emits ForceUnlocked): unlock it, and " + strings.Replace(next, "its ", "the ", 1) + " proceeds"
	if strings.Contains(next, "restore") {
		s += "; CAPTF does not retry a failed restore for the same serial (RestoreJobSucceeded False/RestoreFailed): after the unlock, ask for it again"
	}
	return s
}

// NoBaseText is the runtimes' answer to a state whose chunks have no
// base Secret, as the runner replay saw it: OpenTofu reads the base
// alone, finds none and takes the lock to write an empty state, which
// fails as with no state; terraform v1.11.4 crashes in init.
const NoBaseText = "if the inconsistency is chunks without their base Secret tfstate-default-<suffix>, the restore's init fails (OpenTofu reads that as no state and fails on this lock; terraform v1.11.4 was seen to crash there) and its force-unlock step never runs"
