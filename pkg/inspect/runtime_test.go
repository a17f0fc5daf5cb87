package inspect

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
)

// withConditions is demo in full with these status conditions, each
// given as type, status, reason.
func withConditions(conds ...[3]string) *unstructured.Unstructured {
	u := full(demo, nil)
	list := make([]any, len(conds))
	for n, c := range conds {
		list[n] = map[string]any{"type": c[0], "status": c[1], "reason": c[2], "message": "m", "lastTransitionTime": "2026-09-26T15:53:38Z"}
	}
	u.Object["status"] = map[string]any{"conditions": list}
	return u
}

// The lock info as the runtime decodes it (statemgr.LockInfo with
// encoding/json): Info and Path must be strings, keys match whatever
// their case, null leaves a field empty; CAPTF ignores both fields.
func TestRuntimeDecodesTheWholeLockInfo(t *testing.T) {
	base := `"ID":"` + lockID + `","Operation":"OperationTypeApply","Who":"root@` + demoPod + `","Version":"1.11.4","Created":"2026-09-26T15:53:38Z"`
	for _, c := range []struct {
		name, extra string
		fails       bool
	}{
		{"as the runtime writes it", `,"Info":"","Path":""`, false},
		{"no Info or Path", ``, false},
		{"null Info", `,"Info":null`, false},
		{"unknown field", `,"Extra":5`, false},
		{"Info a number", `,"Info":5`, true},
		{"info in lower case, a number", `,"info":5`, true},
		{"PATH an object", `,"PATH":{}`, true},
		{"Path a bool", `,"Path":true`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			info := "{" + base + c.extra + "}"
			l := ParseLease(lease(demo, ptr(lockID), &info))
			if l.Info == nil {
				t.Fatalf("CAPTF's decode failed: %v", l.InfoErr)
			}
			if (l.RuntimeInfoErr != nil) != c.fails {
				t.Fatalf("runtime decode error %v, want failure %v", l.RuntimeInfoErr, c.fails)
			}
			r := newCluster([]runtime.Object{lease(demo, ptr(lockID), &info), stateSecret(demo)}, demo).only(t)
			want(t, r, v1alpha1.Stale)
			if r.Decision.CAPTFClears == c.fails || (r.Decision.StaleCase == StaleRuntimeInfo) != c.fails {
				t.Errorf("captfClears %v, case %v: %s", r.Decision.CAPTFClears, r.Decision.StaleCase, r.Decision.Reason)
			}
			if c.fails && !strings.Contains(r.Decision.Reason, "cannot unmarshal") {
				t.Errorf("the reason does not name the runtime's error: %s", r.Decision.Reason)
			}
		})
	}
}

// Past the Job's start: what the runtime does decides whether the Job
// CAPTF starts clears the lock.
func TestRuntimeDecidesPastTheJobStart(t *testing.T) {
	for _, c := range []struct {
		name   string
		obj    *unstructured.Unstructured
		state  bool // a state Secret exists
		want   StaleCase
		reason []string
	}{
		{"never written", withConditions([3]string{"StateReadable", "Unknown", "StateNotFound"}), false, StaleNoState,
			[]string{"no Job clears it", "StateReadable Unknown/StateNotFound", "the first apply runs init first", "init fails and the force-unlock step never runs", "unlock it, and the first apply proceeds"}},
		{"lost, no restore asked", withConditions([3]string{"StateReadable", "False", "StateLost"}), false, StaleGateClosed,
			[]string{"no Job but a restore starts"}},
		// review26b N4: a first apply killed after its init wrote the
		// empty state Secret, before CAPTF's next pass: the Secret wins.
		{"never written by CAPTF's last pass, but its init wrote the state Secret since", withConditions([3]string{"StateReadable", "Unknown", "StateNotFound"}), true, StaleClears,
			[]string{"CAPTF clears it with the object's next Job"}},
		// Issue 26's reproduction: the state Secret deleted after CAPTF
		// recorded StateReadable True/StateRead.
		{"a live object's state Secret deleted since CAPTF read it", withConditions([3]string{"StateReadable", "True", "StateRead"}), false, StaleNoState,
			[]string{"no Job clears it", "no state Secret of suffix " + demo.Suffix() + " exists, though CAPTF last recorded StateReadable True/StateRead: it was deleted since", "its next Job runs init first", "init fails and the force-unlock step never runs", "unlock it, and the next Job proceeds"}},
		{"a live object's state Secret present", withConditions([3]string{"StateReadable", "True", "StateRead"}), true, StaleClears,
			[]string{"CAPTF clears it with the object's next Job"}},
		{"image not pulled", withConditions([3]string{"ApplyJobSucceeded", "False", "ImagePullFailed"}), true, StaleNoSteps,
			[]string{"until the image runs", "ApplyJobSucceeded False/ImagePullFailed", "never reaches its init and force-unlock steps"}},
		{"image invalid", withConditions([3]string{"ApplyJobSucceeded", "False", "ImageInvalid"}), true, StaleNoSteps, []string{"layout is invalid"}},
		// shared/pullfallback.go pullFailed: a drift or refresh Job's
		// pull failure is on DriftJobSucceeded, a restore's on
		// RestoreJobSucceeded; each stops only the Jobs it names.
		{"drift image not pulled", withConditions([3]string{"DriftJobSucceeded", "False", "ImagePullFailed"}), true, StaleNoSteps,
			[]string{"until the image runs", "drift and refresh Jobs could not be pulled", "DriftJobSucceeded False/ImagePullFailed", "never reaches its init and force-unlock steps", "until that image can be pulled or CAPTF has another to try"}},
		{"restore image not pulled, no restore asked for", withConditions([3]string{"RestoreJobSucceeded", "False", "ImagePullFailed"}), true, StaleClears,
			[]string{"CAPTF clears it with the object's next Job (a drift Job"}},
		{"a Job slot", withConditions([3]string{"DriftJobSucceeded", "Unknown", "WaitingForJobSlot"}), true, StaleClears,
			[]string{"CAPTF clears it with the object's next Job", "waits first for DriftJobSucceeded Unknown/WaitingForJobSlot", "delays the clear and does not stop it"}},
		{"the run lease and the cluster", withConditions([3]string{"ApplyJobSucceeded", "Unknown", "WaitingForRunLease"}, [3]string{"RestoreJobSucceeded", "Unknown", "WaitingForClusterOperation"}), true, StaleClears,
			[]string{"WaitingForRunLease", "and for RestoreJobSucceeded Unknown/WaitingForClusterOperation"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs := []runtime.Object{held(demo, "root@"+demoPod)}
			if c.state {
				objs = append(objs, stateSecret(demo))
			}
			r := newClusterFull(objs, c.obj).only(t)
			want(t, r, v1alpha1.Stale, c.reason...)
			if r.Decision.StaleCase != c.want || r.Decision.CAPTFClears != (c.want == StaleClears) {
				t.Errorf("case %v (captfClears %v), want %v: %s", r.Decision.StaleCase, r.Decision.CAPTFClears, c.want, r.Decision.Reason)
			}
		})
	}
}

// A restore asked for of a lost state: CAPTF starts it (if its backup
// exists), and its init fails on the lock as the apply's would.
func TestRestoreOfALostStateFailsOnTheLock(t *testing.T) {
	for _, reason := range []string{"StateLost", "ApplyOutcomeUnknown"} {
		u := withConditions([3]string{"StateReadable", "False", reason})
		u.SetAnnotations(map[string]string{"captf.io/restore-state": "3"})
		r := newClusterFull([]runtime.Object{held(demo, "root@"+demoPod)}, u).only(t)
		want(t, r, v1alpha1.Stale, "no Job clears it", "the restore Job runs init first", "CAPTF does not retry it for the same serial", "remove the captf.io/restore-state annotation, wait until status.lastRestoredSerial is cleared")
		if r.Decision.StaleCase != StaleNoState || r.Decision.CAPTFClears {
			t.Errorf("%s: case %v: %s", reason, r.Decision.StaleCase, r.Decision.Reason)
		}
	}
	u := withConditions([3]string{"StateReadable", "False", "StateInconsistent"})
	u.SetAnnotations(map[string]string{"captf.io/restore-state": "3"})
	r := newClusterFull([]runtime.Object{held(demo, "root@"+demoPod)}, u).only(t)
	want(t, r, v1alpha1.Stale, "if the inconsistency is chunks without their base Secret", "the restore's init fails", "or a base Secret without its tfstate key", "terraform v1.11.4 was seen to crash on chunks without a base")
	if r.Decision.StaleCase != StaleGateUnsure || r.Decision.CAPTFClears {
		t.Errorf("inconsistent: case %v: %s", r.Decision.StaleCase, r.Decision.Reason)
	}
}

// review26d M2: which Job a pull failure stops is the kind of Job the
// gate names (Gate.NextOp), never words read out of Next, which may quote
// a TerraformCluster named restore-lab.
func TestBlockedFollowsTheGatesOp(t *testing.T) {
	drift := Runtime{DriftNoSteps: "False/ImagePullFailed"}
	restore := Runtime{RestoreNoSteps: "False/ImagePullFailed"}
	for _, c := range []struct {
		name string
		rt   Runtime
		next jobgate.Op
		want string
	}{
		{"drift failure, a drift or refresh Job next", drift, jobgate.OpRefresh, "DriftJobSucceeded False/ImagePullFailed"},
		{"drift failure, no Job named", drift, "", "DriftJobSucceeded False/ImagePullFailed"},
		{"restore failure, a drift Job next", restore, jobgate.OpRefresh, ""},
		{"restore failure, the restore next", restore, jobgate.OpRestore, "RestoreJobSucceeded False/ImagePullFailed"},
		{"drift failure, the restore next", drift, jobgate.OpRestore, ""},
		{"drift failure, the destroy next", drift, jobgate.OpDestroy, ""},
	} {
		if got := c.rt.Blocked(c.next); got != c.want {
			t.Errorf("%s: Blocked = %q, want %q", c.name, got, c.want)
		}
	}
}
