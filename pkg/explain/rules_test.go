package explain

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
)

// What the controller does next, per verdict and per Stale case: the text
// an operator reads under "What CAPTF does next".
func TestControllerAction(t *testing.T) {
	const otherID = "aaaaaaaa-0000-0000-0000-000000000000"
	// forceUnlock is the sentence that names the Job that clears the lock.
	forceUnlock := "the next Job it creates for terraformcluster/demo, for any op, runs init and then force-unlock -force " + holderID +
		" first; at that Job's creation CAPTF emits a Warning event ForceUnlocked and adds 1 to captf_lock_force_unlocks_total (alert CAPTFForceUnlocks)"
	active := &v1alpha1.ActiveJob{Name: "captf-c-demo-apply-a2-aaaaaa", Operation: "apply", Attempt: 2}
	activeFirst := "Job captf-c-demo-apply-a2-aaaaaa is active, so the controller checks the lock only after it finishes. "
	paused := &jobgate.Gate{State: jobgate.Closed, Reason: "the object is paused (annotation cluster.x-k8s.io/paused): CAPTF starts no Job while it is", Quiet: true}
	dependency := &jobgate.Gate{State: jobgate.Unsure, Reason: "a dependency gate is set (DependenciesReady False/Waiting): CAPTF starts no Job for a mutable or unprovisioned object until it clears"}
	never := "It never unlocks it through a Job. A reconcile that reads the state sets StateReadable=False/StateLocked (as it turns so: a Warning event StateLocked, captf_state_read_errors_total{reason=\"locked\"}, alert CAPTFStateUnreadable). Every Job fails."
	own := heldBy("root@" + runPod)
	released := &jobgate.Gate{State: jobgate.Closed, Reason: "the object is being deleted without a Cluster owner reference, state, Job or sign of an apply: CAPTF drops its finalizer in its preamble, starting no Job and leaving the Lease", Quiet: true, BeforeLockCheck: true, Releases: true}

	liveAction := "Nothing: the object's own runner pod holds the lock. CAPTF creates no Job of terraformcluster/demo until its run lease captf-run-" + demo.Suffix() +
		" is free, which it is only once every pod of that pod's Job has ended (the object waits: WaitingForRunLease). Once the pod has ended the lock is stale, and the next Job CAPTF starts runs init and then force-unlock -force " + holderID +
		" first. Only past the run lease's backstop (the Job's activeDeadlineSeconds plus 15 minutes) could a Job start while the pod still runs; it would wait lockTimeoutSeconds for the lock, then fail."
	noState := func(f *inspect.Facts) {
		f.Runtime = inspect.Runtime{StateStatus: "Unknown", StateReason: "StateNotFound"}
	}
	for _, c := range []struct {
		name    string
		r       inspect.Result
		active  *v1alpha1.ActiveJob
		gate    *jobgate.Gate // as explain read it from the object
		verdict v1alpha1.Verdict
		stale   inspect.StaleCase
		want    string
	}{
		{name: "unlocked", r: classify(lockLease("default", nil, "", "")), verdict: v1alpha1.Unlocked,
			want: "Nothing: the lock is free."},
		{name: "live", r: classify(own, podIs(corev1.PodRunning)), verdict: v1alpha1.Live,
			want: liveAction},
		{name: "live, Job active", r: classify(own, podIs(corev1.PodPending)), active: active, verdict: v1alpha1.Live,
			want: activeFirst + liveAction},

		{name: "stale: clears", r: classify(own), verdict: v1alpha1.Stale, stale: inspect.StaleClears,
			want: "T" + forceUnlock[1:] + "."},
		{name: "stale: clears, Job active", r: classify(own, podIs(corev1.PodFailed)), active: active, verdict: v1alpha1.Stale, stale: inspect.StaleClears,
			want: activeFirst + "T" + forceUnlock[1:] + "."},
		{name: "stale: lock-info ID differs", r: classify(lockLease("default", ptr(holderID), otherID, "root@"+runPod)), verdict: v1alpha1.Stale, stale: inspect.StaleIDMismatch,
			want: "Every Job it creates for terraformcluster/demo runs force-unlock of the lock info's ID " + otherID + "; the backend compares holderIdentity " + holderID +
				", answers \"does not match existing lock\", the runner counts that as success, the lock stays and the Job fails waiting for it. Each of these Jobs emits another ForceUnlocked event and adds to captf_lock_force_unlocks_total, so the CAPTFForceUnlocks alert keeps firing. It never clears through a Job."},
		{name: "stale: no state", r: classify(own, noState), verdict: v1alpha1.Stale, stale: inspect.StaleNoState,
			want: "No Job clears it: its state was never written (StateReadable Unknown/StateNotFound). The Job CAPTF creates for terraformcluster/demo runs init and then force-unlock -force " + holderID +
				", but the first apply runs init first, and with no state the kubernetes backend of terraform and OpenTofu locks the state itself to write an empty one; that fails at once while this lock is held (\"the state is already locked by another … client\"), so init fails and the force-unlock step never runs, on every retry alike (each Job still emits ForceUnlocked): unlock it, and the first apply proceeds."},
		{name: "stale: the runtime cannot decode the lock info", r: classify(infoLease(`,"Info":5`)), verdict: v1alpha1.Stale, stale: inspect.StaleRuntimeInfo,
			want: "Every Job it creates for terraformcluster/demo runs init and then force-unlock -force " + holderID + "; terraform and OpenTofu decode the whole lock info before they compare IDs and fail (json: cannot unmarshal number into Go struct field LockInfo.Info of type string), which CAPTF's runner does not accept, so the Job fails and the lock stays. Each of these Jobs emits another ForceUnlocked event and adds to captf_lock_force_unlocks_total. It never clears through a Job: unlock it."},
		{name: "stale: the image does not run", r: classify(own, func(f *inspect.Facts) { f.Runtime.NoSteps = "False/ImagePullFailed" }), verdict: v1alpha1.Stale, stale: inspect.StaleNoSteps,
			want: "No Job clears it until the image runs: the runner image could not be pulled (ApplyJobSucceeded False/ImagePullFailed): a Job whose pod cannot run the image never reaches its init and force-unlock steps. Once a Job of terraformcluster/demo runs its steps, it runs init and then force-unlock -force " + holderID + " first."},
		{name: "stale: clears after a wait", r: classify(own, func(f *inspect.Facts) {
			f.Runtime.Waits = []string{"ApplyJobSucceeded Unknown/WaitingForJobSlot: a Job slot"}
		}), verdict: v1alpha1.Stale, stale: inspect.StaleClears,
			want: "T" + forceUnlock[1:] + ". It waits first for ApplyJobSucceeded Unknown/WaitingForJobSlot: a Job slot, which delays the clear and does not stop it."},
		{name: "stale: object unreadable", r: classify(own, ownerExists(nil), gateIs(nil)), verdict: v1alpha1.Stale, stale: inspect.StaleOwnerUnread,
			want: "If terraformcluster/demo exists, " + forceUnlock + "; whether it exists could not be read."},
		{name: "stale: object gone, whatever is active", r: classify(own, ownerExists(ptr(false)), gateIs(nil)), active: active, verdict: v1alpha1.Stale, stale: inspect.StaleOwnerGone,
			want: "Nothing: terraformcluster/demo no longer exists, so no controller will ever clear this lock."},
		{name: "stale: gates unread", r: classify(own, gateIs(nil)), verdict: v1alpha1.Stale, stale: inspect.StaleGatesUnread,
			want: "If a Job starts, " + forceUnlock + "; whether one will could not be read."},
		{name: "stale: gate closed", r: classify(own, gateIs(paused)), verdict: v1alpha1.Stale, stale: inspect.StaleGateClosed,
			want: "Nothing: " + paused.Reason + ". The lock stays until that changes or it is cleared by hand."},
		// The preamble lets an ownerless deletion go, leaving the Lease.
		{name: "stale: released without a Job", r: classify(own, gateIs(released)), verdict: v1alpha1.Stale, stale: inspect.StaleGateClosed,
			want: "Nothing: " + released.Reason + ". Once the object is gone no controller reads this lock: clear it by hand."},
		{name: "stale: gate unsure", r: classify(own, gateIs(dependency)), verdict: v1alpha1.Stale, stale: inspect.StaleGateUnsure,
			want: "If a Job starts, " + forceUnlock + ". A dependency gate is set (DependenciesReady False/Waiting): CAPTF starts no Job for a mutable or unprovisioned object until it clears."},

		{name: "foreign: other workspace", r: classify(lockLease("staging", ptr(holderID), holderID, "root@"+runPod)), active: active, verdict: v1alpha1.Foreign,
			want: "Nothing: CAPTF reads only workspace default, so no controller reads this lock."},
		{name: "unknown: empty holderIdentity", r: classify(lockLease("default", ptr(""), holderID, "root@"+runPod)), verdict: v1alpha1.Unknown,
			want: "Nothing: CAPTF treats an empty holderIdentity as no lock, so it sets no condition for it; any Job it starts finds the state locked and fails."},
		{name: "foreign: no owner", r: classify(heldBy("alice@laptop"), noOwner), verdict: v1alpha1.Foreign,
			want: "Nothing: no CAPTF object owns this lock, so no controller reads it or sets a condition for it."},
		{name: "foreign: owner gone", r: classify(heldBy("alice@laptop"), ownerExists(ptr(false))), verdict: v1alpha1.Foreign,
			want: "Nothing: terraformcluster/demo no longer exists, so no controller reads this lock."},
		{name: "foreign: owner unread", r: classify(heldBy("alice@laptop"), ownerExists(nil)), verdict: v1alpha1.Foreign,
			want: "If terraformcluster/demo exists: " + never + " Whether it exists could not be read."},
		{name: "foreign: owner exists", r: classify(heldBy("alice@laptop")), verdict: v1alpha1.Foreign, want: never},
		{name: "foreign: Job active, object paused", r: classify(heldBy("alice@laptop")), active: active, gate: paused, verdict: v1alpha1.Foreign,
			want: activeFirst + never + " Now: " + paused.Reason + "."},
		{name: "foreign: gate unsure is not said", r: classify(heldBy("alice@laptop")), gate: dependency, verdict: v1alpha1.Foreign, want: never},
		{name: "unknown: no lock info", r: classify(lockLease("default", ptr(holderID), "", "")), verdict: v1alpha1.Unknown, want: never},
	} {
		t.Run(c.name, func(t *testing.T) {
			if d := c.r.Decision; d.Verdict != c.verdict || d.StaleCase != c.stale || d.Case == 0 {
				t.Fatalf("fixture is %s/%v, want %s/%v (%s)", d.Verdict, d.StaleCase, c.verdict, c.stale, d.Reason)
			}
			if got := controllerAction(c.r, c.active, c.gate); got != c.want {
				t.Errorf("controller action\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// The advice: the commands printed to fix or investigate the lock, each
// quoted, and comments.
func TestAdvice(t *testing.T) {
	const infoID = "bbbbbbbb-0000-0000-0000-000000000000"
	stale := "kubectl captf unlock terraformcluster/demo -n default --id '" + holderID + "' --confirm"
	foreign := "# a foreign holder may be mid-write: make sure the holder shown above has stopped, then:"
	own := heldBy("root@" + runPod)
	for _, c := range []struct {
		name string
		r    inspect.Result
		want []string
	}{
		{"unlocked", classify(lockLease("default", nil, "", "")), []string{}},
		{"stale, CAPTF clears it", classify(own), []string{"# nothing is required, the next Job of the object clears it. To clear it now:", stale}},
		{"stale, CAPTF does not", classify(own, gateIs(&jobgate.Gate{State: jobgate.Closed, Reason: "paused"})), []string{stale}},
		{"stale, object gone", classify(own, ownerExists(ptr(false))), []string{stale}},
		{"stale, no state", classify(own, func(f *inspect.Facts) {
			f.Runtime = inspect.Runtime{StateStatus: "Unknown", StateReason: "StateNotFound"}
		}),
			[]string{"# no Job of the controller clears this lock, clear it here and the next Job proceeds:", stale}},
		{"stale, the image does not run", classify(own, func(f *inspect.Facts) { f.Runtime.NoSteps = "False/ImagePullFailed" }),
			[]string{"# fix the runner image or its pull secret, the first Job whose image runs clears this lock. To clear it now:", stale}},
		{"live", classify(own, podIs(corev1.PodRunning)), []string{
			"# the runner is alive: look at it rather than unlocking",
			"kubectl logs -n default " + runPod,
			"kubectl describe pod -n default " + runPod,
			"# only if it is certainly not writing the state, naming the lock ID you saw:",
			"kubectl captf unlock terraformcluster/demo -n default --force --id '" + holderID + "' --confirm",
		}},
		{"foreign pod that exists", classify(heldBy("root@web-0"), podIs(corev1.PodRunning)), []string{
			foreign, "kubectl describe pod -n default web-0", "kubectl captf unlock terraformcluster/demo -n default --id '" + holderID + "' --confirm",
		}},
		{"foreign workstation", classify(heldBy("alice@laptop")), []string{
			foreign, "kubectl captf unlock terraformcluster/demo -n default --id '" + holderID + "' --confirm",
		}},
		// The ID to name is the lock info's where holderIdentity is "".
		{"unknown, empty holderIdentity", classify(lockLease("default", ptr(""), infoID, "root@"+runPod)), []string{
			foreign, "kubectl captf unlock terraformcluster/demo -n default --id '" + infoID + "' --confirm",
		}},
		{"an ID that needs quoting", classify(lockLease("default", ptr("a b'c"), "", "")), []string{
			foreign, `kubectl captf unlock terraformcluster/demo -n default --id 'a b'\''c' --confirm`,
		}},
		// A holder's escape sequence is never printed to be pasted.
		{"an ID that cannot be pasted", classify(lockLease("default", ptr("x\x1b]0;t\x07"), "", "")), []string{
			foreign, `# no command printed: argument "x\x1b]0;t\a" holds characters that cannot be pasted safely`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := (&Explainer{}).advice(c.r, Target{Namespace: "default", Lease: c.r.Facts.Lease.Name, Object: &demo, Arg: demoArg})
			if got := lines(a); strings.Join(got, "\n") != strings.Join(c.want, "\n") || a == nil {
				t.Errorf("advice\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// A disagreement is flagged only where CAPTF's own rules would write
// another StateReadable condition now.
func TestDisagreement(t *testing.T) {
	const otherID = "cccccccc-0000-0000-0000-000000000000"
	const waits = " A Job is active, the object is paused, its reconcile stops before reading the state or its lock check fails, so that reconcile waits."
	lockedFree := "The object's condition says StateLocked, but the lock is free now; CAPTF rewrites the condition at its next reconcile that reads the state."
	lockedOther := "The object's condition says StateLocked by another lock than the one held now (" + holderID + "); it is rewritten at CAPTF's next reconcile that reads the state."
	readForeign := func(reason string) string {
		return "The object's condition says " + reason + ", but a lock that is not its own runner's is held: CAPTF sets StateLocked at its next reconcile that reads the state."
	}
	locked := func(id string) *v1alpha1.Condition {
		return &v1alpha1.Condition{Status: "False", Reason: "StateLocked", Message: "the state is locked by " + id}
	}
	read := &v1alpha1.Condition{Status: "True", Reason: "StateRead"}
	quiet := &jobgate.Gate{State: jobgate.Closed, Reason: "paused", Quiet: true}
	busy := &v1alpha1.ActiveJob{Name: "captf-c-demo-apply-a2-aaaaaa"}
	own, workstation := heldBy("root@"+runPod), heldBy("alice@laptop")
	free := classify(lockLease("default", nil, "", ""))
	for _, c := range []struct {
		name   string
		r      *inspect.Result // nil: the Lease does not exist
		cond   *v1alpha1.Condition
		noRef  bool
		active *v1alpha1.ActiveJob
		gate   *jobgate.Gate
		want   string
	}{
		{name: "no condition", r: &free, want: ""},
		{name: "no object", r: &free, cond: locked(holderID), noRef: true, want: ""},
		{name: "StateLocked, no Lease", cond: locked(holderID), want: lockedFree},
		{name: "StateLocked, lock free", r: &free, cond: locked(holderID), want: lockedFree},
		{name: "StateLocked, lock free, Job active", r: &free, cond: locked(holderID), active: busy, want: lockedFree + waits},
		{name: "StateLocked, empty holderIdentity", r: ptr(classify(lockLease("default", ptr(""), holderID, "alice@laptop"))), cond: locked(holderID), want: lockedFree},
		{name: "StateLocked by the lock held", r: ptr(classify(workstation)), cond: locked(holderID), want: ""},
		{name: "StateLocked by another lock", r: ptr(classify(workstation)), cond: locked(otherID), want: lockedOther},
		{name: "StateLocked by another lock, paused", r: ptr(classify(workstation)), cond: locked(otherID), gate: quiet, want: lockedOther + waits},
		{name: "StateLocked by holderIdentity, no lock info", r: ptr(classify(lockLease("default", ptr(holderID), "", ""))), cond: locked(holderID), want: ""},
		// CAPTF's ID is the lock info's, which its condition names.
		{name: "StateLocked by CAPTF's ID", r: ptr(classify(lockLease("default", ptr(holderID), otherID, "alice@laptop"))), cond: locked(otherID), want: ""},
		{name: "StateRead, foreign", r: ptr(classify(workstation)), cond: read, want: readForeign("StateRead")},
		{name: "StateNotFound, unknown", r: ptr(classify(lockLease("default", ptr(holderID), "", ""))), cond: &v1alpha1.Condition{Status: "False", Reason: "StateNotFound"}, want: readForeign("StateNotFound")},
		{name: "StateRead, foreign, Job active", r: ptr(classify(workstation)), cond: read, active: busy, want: ""},
		{name: "StateRead, foreign, paused", r: ptr(classify(workstation)), cond: read, gate: quiet, want: ""},
		{name: "StateRead, foreign, other workspace", r: ptr(classify(lockLease("staging", ptr(holderID), holderID, "alice@laptop"))), cond: read, want: ""},
		{name: "StateRead, own runner live", r: ptr(classify(own, podIs(corev1.PodRunning))), cond: read, want: ""},
		{name: "StateRead, own runner stale", r: ptr(classify(own)), cond: read, want: ""},
		{name: "StateRead, empty holderIdentity", r: ptr(classify(lockLease("default", ptr(""), holderID, "root@"+runPod))), cond: read, want: ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := &v1alpha1.Explanation{Verdict: v1alpha1.Unlocked}
			if c.r != nil {
				x.Verdict = c.r.Decision.Verdict
			}
			x.Context.StateReadable, x.Context.ActiveJob = c.cond, c.active
			ref := &demo
			if c.noRef {
				ref = nil
			}
			if got := disagreement(x, c.r, ref, c.gate); got != c.want {
				t.Errorf("disagreement\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestActiveStep(t *testing.T) {
	for _, c := range []struct {
		job  *v1alpha1.ActiveJob
		want v1alpha1.Step
	}{
		{nil, v1alpha1.Step{Check: "Is a Job of the object active?", Observed: "no active runner Job", Result: "the controller checks the lock"}},
		{&v1alpha1.ActiveJob{Name: "captf-c-demo-destroy-a3-abcdef", Operation: "destroy", Attempt: 3},
			v1alpha1.Step{Check: "Is a Job of the object active?", Observed: "Job captf-c-demo-destroy-a3-abcdef is active (op destroy, attempt 3)", Result: "the controller defers the lock check until it finishes"}},
	} {
		if got := activeStep(c.job); got != c.want {
			t.Errorf("activeStep(%+v) = %+v, want %+v", c.job, got, c.want)
		}
	}
}

func TestSmallHelpers(t *testing.T) {
	for in, want := range map[string]string{"": "", "a": "A", "the next Job": "The next Job"} {
		if got := upper(in); got != want {
			t.Errorf("upper(%q) = %q, want %q", in, got, want)
		}
	}
	if got := (&Explainer{}).now(); time.Since(got) > time.Minute {
		t.Errorf("the default clock says %v", got)
	}
}

// What CAPTF does next assumes that its manager reconciles the object:
// said once with every deletion of the Lease, and with the force-unlock
// of the next Job of an object that carries the watch-filter label (a
// sign that managers are split by it), named with its value.
func TestActionAssumesTheManagerReconciles(t *testing.T) {
	own := heldBy("root@" + runPod)
	r := classify(own)
	r.Object = captfObject(nil)
	r.Object.SetLabels(map[string]string{WatchFilterLabel: "team-a"})
	if got := controllerAction(r, nil, nil); !strings.HasSuffix(got, "(its --namespace and --watch-filter decide which it does; this one carries cluster.x-k8s.io/watch-filter=team-a).") {
		t.Errorf("clears: %q", got)
	}
	r.Object.SetLabels(nil)
	if got := controllerAction(r, nil, nil); strings.Contains(got, "This assumes") {
		t.Errorf("clears, no label: %q", got)
	}
	retain := &jobgate.Gate{State: jobgate.Closed, Reason: "retain", Deletes: &jobgate.Deletion{Path: jobgate.PathRetain, When: "now", Why: "why", Certain: true, AfterLockCheck: true}}
	got := controllerAction(classify(heldBy("alice@laptop"), gateIs(retain)), nil, retain)
	if strings.Count(got, "This assumes that CAPTF's manager reconciles the object") != 1 || !strings.Contains(got, "CAPTF deletes this lock Lease itself") {
		t.Errorf("deletes: %q", got)
	}
	for _, g := range []*jobgate.Gate{{State: jobgate.Closed, Reason: "paused"}, {State: jobgate.Unsure, Reason: "unsure"}} {
		if got := controllerAction(classify(own, gateIs(g)), nil, g); strings.Contains(got, "This assumes") {
			t.Errorf("no claim, yet the assumption: %q", got)
		}
	}
}
