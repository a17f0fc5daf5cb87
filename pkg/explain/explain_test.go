package explain

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/advice"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/audit"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

var lockName = object.LockLeaseName(object.DefaultWorkspace, demo.Suffix())

// activeJob is demo's running apply Job, attempt 2, labelled as CAPTF does
// and controlled by demo.
func activeJob() *batchv1.Job {
	return jobOf(demoUID)
}

// jobOf is activeJob controlled by the object of uid: an earlier demo's,
// when uid is not demoUID.
func jobOf(uid types.UID) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "captf-c-demo-apply-a2-aaaaaa", Namespace: demo.Namespace, Labels: map[string]string{
		inspect.LabelManaged: "true", inspect.LabelOwnerKind: demo.Kind.Name, inspect.LabelOwnerName: demo.Name,
		inspect.LabelOp: "apply", inspect.LabelAttempt: "2",
	}}}
	j.OwnerReferences = []metav1.OwnerReference{{APIVersion: object.Group + "/" + object.Version, Kind: demo.Kind.Name, Name: demo.Name, UID: uid, Controller: ptr(true)}}
	j.Status.StartTime = &metav1.Time{Time: now.Add(-time.Minute)}
	return j
}

// event is an events.k8s.io event about kind/name, at minute min past now.
func event(kind, name, reason, note string, min int) *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: strings.ToLower(kind+"-"+name+"-"+reason+"-") + note, Namespace: demo.Namespace},
		Regarding:  corev1.ObjectReference{Kind: kind, Name: name},
		Reason:     reason, Type: "Warning", Note: note,
		EventTime: metav1.NewMicroTime(now.Add(time.Duration(min) * time.Minute)),
	}
}

func reasons(evs []v1alpha1.EventSummary) string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Reason+"="+e.Note)
	}
	return strings.Join(out, ",")
}

// step renders a step as a reader scans it.
func step(s v1alpha1.Step) string { return s.Check + " | " + s.Observed + " | " + s.Result }

// Explain end to end on fake clients: what a user reads for each kind of
// lock and of context, including what could not be read.
func TestExplainOnFakes(t *testing.T) {
	clears := []string{"# nothing is required, the next Job of the object clears it. To clear it now:", "kubectl captf unlock terraformcluster/demo -n default --id '" + holderID + "' --confirm"}
	// describeDemo is the look at demo's Cluster API Cluster (its owner
	// reference names Cluster demo), the last advice of each of its locks.
	describeDemo := []string{"# to see the Cluster this lock belongs to, and its conditions, with clusterctl:", "clusterctl describe cluster demo -n default --show-conditions all"}
	noJob := "Is a Job of the object active? | no active runner Job | the controller checks the lock"
	leaseYes := "Does the Lease exist? | lease/" + lockName + " | yes"
	held := heldBy("root@" + runPod)
	secret := object.StateSecretName(object.DefaultWorkspace, demo.Suffix())
	runLease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "captf-run-" + demo.Suffix(), Namespace: demo.Namespace, Annotations: map[string]string{
		"captf.io/lease-op": "apply", "captf.io/lease-acquired-at": "2026-11-30T09:00:00Z",
	}}}
	runLease.Spec.HolderIdentity = ptr(runner1)
	series := event("TerraformCluster", "demo", "StateLocked", "locked", 1)
	series.Series = &eventsv1.EventSeries{Count: 5, LastObservedTime: metav1.NewMicroTime(now.Add(9 * time.Minute))}
	paused := captfObject(nil)
	paused.SetAnnotations(map[string]string{"cluster.x-k8s.io/paused": ""})

	for _, c := range []struct {
		name   string
		typed  []runtime.Object
		captf  []*unstructured.Unstructured
		setup  func(*fakeapi.Server)
		target func(*Target)

		verdict v1alpha1.Verdict
		steps   []string // the steps, in order; nil: not checked
		action  string   // how the controller action starts
		advice  []string // nil: not checked
		check   func(t *testing.T, x *v1alpha1.Explanation, warnings []string)
	}{
		{
			name: "no Lease", captf: []*unstructured.Unstructured{captfObject(nil)},
			verdict: v1alpha1.Unlocked,
			steps:   []string{"Does the Lease exist? | lease/" + lockName + " is not found | not held"},
			action:  "Nothing: there is no lock.", advice: []string{},
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				if x.Reason != "the lock Lease does not exist: the state was never locked here" || x.Lock != nil || x.Holder != nil {
					t.Errorf("reason %q, lock %+v, holder %+v", x.Reason, x.Lock, x.Holder)
				}
				if x.Object == nil || x.Object.Kind != "TerraformCluster" || x.Object.Name != "demo" || x.Name != lockName {
					t.Errorf("object %+v, name %q", x.Object, x.Name)
				}
				if x.Context.Unreadable != nil || x.Context.StateSecrets == nil || x.Context.Events == nil {
					t.Errorf("context %+v", x.Context)
				}
			},
		},
		{
			name: "no Lease, no object", verdict: v1alpha1.Unlocked, action: "Nothing: there is no lock.",
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				if x.Context.Unreadable != nil || x.Context.StateReadable != nil {
					t.Errorf("a missing object is no read error: %+v", x.Context)
				}
			},
		},
		{
			name: "no Lease, named by its Lease only", target: func(t *Target) { t.Object, t.Arg = nil, "lease/"+lockName },
			verdict: v1alpha1.Unlocked, action: "Nothing: there is no lock.", advice: []string{},
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				if x.Object != nil || x.Context.RunLease != nil || len(x.Context.StateSecrets) != 0 {
					t.Errorf("object %+v, run lease %+v", x.Object, x.Context.RunLease)
				}
			},
		},
		{
			name: "no owner: the context by the Lease's suffix", typed: []runtime.Object{heldBy("alice@laptop"), runLease},
			target:  func(t *Target) { t.Object, t.Arg = nil, "lease/"+lockName },
			verdict: v1alpha1.Foreign, action: "Nothing: no CAPTF object owns this lock, so no controller reads it or sets a condition for it.",
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				if x.Object != nil || x.Context.RunLease == nil || x.Context.RunLease.Holder != runner1 {
					t.Errorf("object %+v, run lease %+v", x.Object, x.Context.RunLease)
				}
			},
		},
		{
			name: "stale, CAPTF clears it", typed: []runtime.Object{held}, captf: []*unstructured.Unstructured{captfObject(nil)},
			verdict: v1alpha1.Stale,
			steps: []string{noJob, leaseYes,
				"Is a holder set? | spec.holderIdentity is \"" + holderID + "\" | held",
				"Does the lock info parse? | ID \"" + holderID + "\", apply by \"root@" + runPod + "\" | yes",
				"Which host does Who name? | Who \"root@" + runPod + "\" | host \"" + runPod + "\"",
				"Which CAPTF object owns the lock? | suffix " + demo.Suffix() + " is terraformcluster/demo's (from the object) | terraformcluster/demo",
				"Is \"" + runPod + "\" a pod of terraformcluster/demo's own runner Jobs? | Job " + runner1 + ": op apply, attempt 1, hash d72d2a | yes",
				"Does the holder pod exist? | pod " + runPod + " is not found | gone: stale",
			},
			action: "The next Job it creates for terraformcluster/demo, for any op, runs init and then force-unlock -force " + holderID + " first;",
			advice: append(clears, describeDemo...),
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				if x.Cluster != "demo" {
					t.Errorf("cluster %q, want demo", x.Cluster)
				}
				if !x.CAPTFClears || x.Holder == nil || x.Holder.Pod != runPod || x.Lock == nil || x.Lock.ID != holderID || x.Disagreement != "" {
					t.Errorf("clears %v, holder %+v, lock %+v, disagreement %q", x.CAPTFClears, x.Holder, x.Lock, x.Disagreement)
				}
			},
		},
		{
			name: "named by its Lease only", typed: []runtime.Object{held}, captf: []*unstructured.Unstructured{captfObject(nil)},
			target:  func(t *Target) { t.Object, t.Arg = nil, "lease/"+lockName },
			verdict: v1alpha1.Stale, action: "The next Job it creates for terraformcluster/demo",
			advice: append([]string{clears[0], "kubectl captf unlock lease/" + lockName + " -n default --id '" + holderID + "' --confirm"}, describeDemo...),
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				if o := x.Object; o == nil || o.Name != "demo" || o.Exists == nil || !*o.Exists {
					t.Errorf("the owner is taken from the lock: %+v", o)
				}
			},
		},
		{
			// The object is read with its kind's list, so that it is
			// unreadable means that no object of its kind is: whether it
			// exists is unknown, the owner is found by the holder's pod name.
			name: "object unreadable", typed: []runtime.Object{held}, captf: []*unstructured.Unstructured{captfObject(nil)},
			setup: func(s *fakeapi.Server) {
				refuse(s, "list", "*", "terraformclusters")
				refuse(s, "get", "*", "terraformclusters")
			},
			verdict: v1alpha1.Stale, action: "If terraformcluster/demo exists, the next Job it creates for terraformcluster/demo",
			advice: []string{clears[1]},
			check: func(t *testing.T, x *v1alpha1.Explanation, warnings []string) {
				if !strings.HasSuffix(x.ControllerAction, "; whether it exists could not be read.") {
					t.Errorf("action %q", x.ControllerAction)
				}
				if u := x.Context.Unreadable; len(u) != 2 || !strings.HasPrefix(u[0], "active Job: the object's uid is not known") ||
					!strings.HasPrefix(u[1], "terraformcluster/demo: ") || !strings.Contains(u[1], "forbidden") {
					t.Errorf("unreadable %q", u)
				}
				if len(warnings) != 1 || !strings.Contains(warnings[0], "cannot list terraformclusters") || !strings.HasSuffix(warnings[0], "; its objects are shown as unreadable") {
					t.Errorf("warnings %q", warnings)
				}
			},
		},
		{
			name: "live, with an active Job", typed: []runtime.Object{held, activeJob(), &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: runPod, Namespace: demo.Namespace, Labels: map[string]string{inspect.LabelManaged: "true"}},
				Status:     corev1.PodStatus{Phase: corev1.PodRunning},
			}},
			captf:   []*unstructured.Unstructured{captfObject(nil)},
			verdict: v1alpha1.Live,
			action:  "Job captf-c-demo-apply-a2-aaaaaa is active, so the controller checks the lock only after it finishes. Nothing: the object's own runner pod holds the lock.",
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				want := "Is a Job of the object active? | Job captf-c-demo-apply-a2-aaaaaa is active (op apply, attempt 2) | the controller defers the lock check until it finishes"
				if got := step(x.Steps[0]); got != want {
					t.Errorf("first step %q", got)
				}
				if j := x.Context.ActiveJob; j == nil || j.From != "jobs" || j.Operation != "apply" || j.Attempt != 2 || !j.StartTime.Equal(now.Add(-time.Minute)) {
					t.Errorf("active Job %+v", j)
				}
				if l := lines(x.Advice); len(l) != 7 || l[1] != "kubectl logs -n default "+runPod || l[6] != describeDemo[1] {
					t.Errorf("advice %q", l)
				}
			},
		},
		{
			name: "Jobs unreadable: the object's status.activeJob", typed: []runtime.Object{held},
			captf: []*unstructured.Unstructured{captfObject(map[string]any{"activeJob": map[string]any{
				"name": "captf-c-demo-destroy-a3-bbbbbb", "operation": "destroy", "attempt": int64(3), "startTime": "2026-11-30T09:45:00Z",
			}})},
			setup:   func(s *fakeapi.Server) { refuse(s, "list", "*", "jobs") },
			verdict: v1alpha1.Stale, action: "Job captf-c-demo-destroy-a3-bbbbbb is active, so the controller checks the lock only after it finishes. The next Job",
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				j := x.Context.ActiveJob
				if j == nil || j.From != "status.activeJob" || j.Operation != "destroy" || j.Attempt != 3 || j.StartTime == nil || j.StartTime.Format(time.RFC3339) != "2026-11-30T09:45:00Z" {
					t.Errorf("active Job %+v", j)
				}
			},
		},
		{
			name: "Jobs unreadable, no status.activeJob", typed: []runtime.Object{held},
			captf:   []*unstructured.Unstructured{captfObject(map[string]any{"activeJob": map[string]any{"operation": "apply"}})},
			setup:   func(s *fakeapi.Server) { refuse(s, "list", "*", "jobs") },
			verdict: v1alpha1.Stale, steps: nil, action: "The next Job",
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				if x.Context.ActiveJob != nil || step(x.Steps[0]) != noJob {
					t.Errorf("an active Job without a name: %+v", x.Context.ActiveJob)
				}
			},
		},
		{
			name: "events: the latest of each lock reason, and the runner's end",
			typed: []runtime.Object{held,
				event("TerraformCluster", "demo", "ForceUnlocked", "older", 1),
				event("TerraformCluster", "demo", "ForceUnlocked", "newer", 2),
				event("TerraformCluster", "demo", audit.Reason, "by-hand", 3),
				series,
				event("TerraformCluster", "demo", "Reconciled", "not-about-locks", 4),
				event("TerraformCluster", "web", "ForceUnlocked", "other-object", 5),
				event("Job", runner1, "BackoffLimitExceeded", "job-failed", 6),
				event("Pod", runPod, "Killing", "pod-killed", 7),
				event("Pod", "web-0", "Killing", "other-pod", 8),
				event("Pod", runPod, "Scheduled", "not-an-end", 9),
			},
			captf: []*unstructured.Unstructured{captfObject(nil)}, verdict: v1alpha1.Stale, action: "The next Job",
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				if got := reasons(x.Context.Events); got != "ForceUnlocked=newer,StateLocked=locked,OperatorForceUnlocked=by-hand" {
					t.Errorf("events %s", got)
				}
				if got := reasons(x.Context.RunnerEvents); got != "Killing=pod-killed,BackoffLimitExceeded=job-failed" {
					t.Errorf("runner events %s", got)
				}
				if s := x.Context.Events[1]; s.Count != 5 || !s.Time.Equal(now.Add(9*time.Minute)) {
					t.Errorf("a series counts %d, last at %v", s.Count, s.Time)
				}
			},
		},
		{
			name: "events: core/v1 where events.k8s.io is refused",
			typed: []runtime.Object{held, &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: "e1", Namespace: demo.Namespace},
				InvolvedObject: corev1.ObjectReference{Kind: "TerraformCluster", Name: "demo"},
				Reason:         "StateLocked", Type: "Warning", Message: "core", Count: 3, LastTimestamp: metav1.NewTime(now),
			}},
			captf:   []*unstructured.Unstructured{captfObject(nil)},
			setup:   func(s *fakeapi.Server) { refuse(s, "list", "events.k8s.io", "events") },
			verdict: v1alpha1.Stale, action: "The next Job",
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				if got := reasons(x.Context.Events); got != "StateLocked=core" || x.Context.Events[0].Count != 3 || !x.Context.Events[0].Time.Equal(now) {
					t.Errorf("events %+v", x.Context.Events)
				}
			},
		},
		{
			name: "events: none readable", typed: []runtime.Object{held}, captf: []*unstructured.Unstructured{captfObject(nil)},
			setup:   func(s *fakeapi.Server) { refuse(s, "list", "*", "events") },
			verdict: v1alpha1.Stale, action: "The next Job",
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				if u := x.Context.Unreadable; len(u) != 1 || !strings.HasPrefix(u[0], "events: ") {
					t.Errorf("unreadable %q", u)
				}
			},
		},
		{
			name: "run lease and state Secrets", typed: []runtime.Object{held, runLease, stateSecret(secret + "-part-1"), stateSecret(secret), stateSecret(secret + "-backup")},
			captf: []*unstructured.Unstructured{captfObject(nil)}, verdict: v1alpha1.Stale, action: "The next Job",
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				want := v1alpha1.RunLease{Name: runLease.Name, Holder: runner1, Op: "apply", AcquiredAt: "2026-11-30T09:00:00Z"}
				if l := x.Context.RunLease; l == nil || *l != want {
					t.Errorf("run lease %+v", l)
				}
				if got := strings.Join(x.Context.StateSecrets, ","); got != secret+","+secret+"-part-1" {
					t.Errorf("state Secrets %s", got)
				}
			},
		},
		{
			name: "run lease and state Secrets refused", typed: []runtime.Object{held, runLease},
			captf: []*unstructured.Unstructured{captfObject(nil)},
			setup: func(s *fakeapi.Server) {
				refuseIf(s, func(r fakeapi.Request) bool {
					return r.Verb == "get" && r.Resource == "leases" && r.Name == runLease.Name
				})
				refuse(s, "list", "", "secrets")
			},
			verdict: v1alpha1.Stale, action: "The next Job",
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				u := x.Context.Unreadable
				if len(u) != 2 || !strings.HasPrefix(u[0], "run lease "+runLease.Name+": ") || !strings.HasPrefix(u[1], "state Secrets: ") || x.Context.RunLease != nil {
					t.Errorf("unreadable %q", u)
				}
			},
		},
		{
			name: "a condition CAPTF would rewrite", captf: []*unstructured.Unstructured{captfObject(stateReadable("False", "StateLocked", "locked by "+holderID))},
			typed:   []runtime.Object{lockLease("default", nil, "", "")},
			verdict: v1alpha1.Unlocked, action: "Nothing: the lock is free.",
			advice: []string{
				"# the condition of the object is out of date until CAPTF reconciles it. To trigger that now:",
				"kubectl annotate terraformcluster/demo -n default '" + advice.ReconcileAnnotation + "=2026-12-01T10:00:00Z' --overwrite",
				describeDemo[0], describeDemo[1],
			},
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				if !strings.HasPrefix(x.Disagreement, "The object's condition says StateLocked, but the lock is free now") {
					t.Errorf("disagreement %q", x.Disagreement)
				}
				c := x.Context.StateReadable
				if c == nil || c.Status != "False" || c.Reason != "StateLocked" || c.LastTransitionTime == nil || c.LastTransitionTime.Format(time.RFC3339) != "2026-11-30T09:30:00Z" {
					t.Errorf("condition %+v", c)
				}
			},
		},
		{
			name: "foreign, the object paused", typed: []runtime.Object{heldBy("alice@laptop")}, captf: []*unstructured.Unstructured{paused},
			verdict: v1alpha1.Foreign, action: "It never unlocks it through a Job.",
			check: func(t *testing.T, x *v1alpha1.Explanation, _ []string) {
				if !strings.HasSuffix(x.ControllerAction, " Now: the object is paused (annotation cluster.x-k8s.io/paused): CAPTF starts no Job while it is.") {
					t.Errorf("action %q", x.ControllerAction)
				}
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := newCluster(t, c.typed, c.captf...)
			if c.setup != nil {
				c.setup(k.Server)
			}
			x, warnings := k.explain(t, c.target)
			if x.Verdict != c.verdict || x.Kind != "Explanation" {
				t.Fatalf("%s %s (%s)", x.Kind, x.Verdict, x.Reason)
			}
			if c.steps != nil {
				var got []string
				for _, s := range x.Steps {
					got = append(got, step(s))
				}
				if strings.Join(got, "\n") != strings.Join(c.steps, "\n") {
					t.Errorf("steps\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.steps, "\n"))
				}
			}
			if !strings.HasPrefix(x.ControllerAction, c.action) {
				t.Errorf("action %q, want it to start %q", x.ControllerAction, c.action)
			}
			if c.advice != nil && strings.Join(lines(x.Advice), "\n") != strings.Join(c.advice, "\n") {
				t.Errorf("advice\n got %q\nwant %q", lines(x.Advice), c.advice)
			}
			if c.check != nil {
				c.check(t, x, warnings)
			}
		})
	}
}

// The object already read (by argument resolution) is not read again:
// its condition is taken from it. Its gates are those the verdict was
// decided with, from the lock's own read, which lists the object's kind
// in full (the server's demo is paused too; it has no condition).
func TestExplainUsesTheFetchedObject(t *testing.T) {
	paused := map[string]string{"cluster.x-k8s.io/paused": ""}
	fetched := captfObject(stateReadable("True", "StateRead", ""))
	fetched.SetAnnotations(paused)
	live := captfObject(nil)
	live.SetAnnotations(paused)
	k := newCluster(t, []runtime.Object{heldBy("root@" + runPod)}, live)
	x, _, err := k.read(Target{Namespace: demo.Namespace, Lease: lockName, Object: &demo, Arg: demoArg}, fetched)
	if err != nil {
		t.Fatal(err)
	}
	if get, list := k.Count("get", "terraformclusters"), k.Count("list", "terraformclusters"); get != 0 || list != 1 {
		t.Errorf("the object was read again: %d gets, %d lists of terraformclusters", get, list)
	}
	if !strings.HasPrefix(x.ControllerAction, "Nothing: the object is paused") || x.CAPTFClears || x.Context.StateReadable == nil || x.Context.StateReadable.Reason != "StateRead" {
		t.Errorf("action %q, clears %v, condition %+v", x.ControllerAction, x.CAPTFClears, x.Context.StateReadable)
	}
}

// Explaining one lock reads it and its context in a handful of requests,
// whatever the size of the cluster or of its namespace's Events: the
// Lease and its holder pod by name, the runner Jobs and the three CAPTF
// kinds in one list each, the Events about the object, its holder pod
// and that pod's Job, each selected on the server by kind and name, the
// run lease, the state Secrets' metadata. Five hundred Events about
// other objects change neither the requests nor the explanation.
func TestExplainRequests(t *testing.T) {
	var noise []runtime.Object
	for n := range 500 {
		noise = append(noise, event("Pod", fmt.Sprintf("other-%d", n), "Killing", fmt.Sprintf("noise-%d", n), n%60))
	}
	own := []runtime.Object{heldBy("root@" + runPod), event("TerraformCluster", "demo", "StateLocked", "locked", 1), event("Pod", runPod, "OOMKilling", "oom", 2)}
	quiet := newCluster(t, own, captfObject(nil))
	noisy := newCluster(t, append(own, noise...), captfObject(nil))
	xq, _ := quiet.explain(t, nil)
	xn, _ := noisy.explain(t, nil)
	if xq.Verdict != v1alpha1.Stale || reasons(xq.Context.Events) != "StateLocked=locked" || reasons(xq.Context.RunnerEvents) != "OOMKilling=oom" {
		t.Fatalf("%s (%s), events %q, runner events %q", xq.Verdict, xq.Reason, reasons(xq.Context.Events), reasons(xq.Context.RunnerEvents))
	}
	if !reflect.DeepEqual(xq, xn) {
		t.Errorf("unrelated Events changed the explanation:\n%+v\n%+v", xq.Context, xn.Context)
	}
	requests := func(k *apiServer) []string {
		var got []string
		for _, r := range k.Requests() {
			s := r.Verb + " " + r.Group + "/" + r.Resource
			if r.Name != "" {
				s += "/" + r.Name
			}
			if f := r.Query.Get("fieldSelector"); f != "" {
				s += "?fieldSelector=" + f
			}
			got = append(got, s)
		}
		slices.Sort(got)
		return got
	}
	got := requests(quiet)
	if n := requests(noisy); !slices.Equal(got, n) {
		t.Errorf("unrelated Events changed the requests:\n%s", strings.Join(n, "\n"))
	}
	want := []string{
		// Whether its namespace is being deleted: no Job starts there.
		"get /namespaces/default",
		"get /pods/" + runPod,
		"get coordination.k8s.io/leases/captf-run-" + demo.Suffix(),
		"get coordination.k8s.io/leases/" + lockName,
		"list /secrets",
		"list batch/jobs",
		"list events.k8s.io/events?fieldSelector=regarding.kind=Job,regarding.name=" + runner1,
		"list events.k8s.io/events?fieldSelector=regarding.kind=Pod,regarding.name=" + runPod,
		"list events.k8s.io/events?fieldSelector=regarding.kind=TerraformCluster,regarding.name=demo",
		"list infrastructure.cluster.x-k8s.io/terraformclusters",
		"list infrastructure.cluster.x-k8s.io/terraformmachinepools",
		"list infrastructure.cluster.x-k8s.io/terraformmachines",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A TerraformMachine's gates read its Cluster API Cluster, from the
// server: one whose infrastructureRef names no TerraformCluster stops
// CAPTF before its lock check, so no Job clears the machine's stale lock.
func TestExplainReadsTheClusterAPICluster(t *testing.T) {
	machine := object.Ref{Kind: object.TerraformMachine, Namespace: demo.Namespace, Name: "web-0"}
	m := &unstructured.Unstructured{Object: map[string]any{}}
	m.SetAPIVersion(object.Group + "/" + object.Version)
	m.SetKind(machine.Kind.Name)
	m.SetNamespace(machine.Namespace)
	m.SetName(machine.Name)
	m.SetUID("uid-web-0")
	m.SetLabels(map[string]string{jobgate.ClusterNameLabel: "web"})
	m.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: jobgate.CAPIGroup + "/v1beta2", Kind: "Machine", Name: "web-0", UID: "m-1"}})
	capi := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": jobgate.CAPIGroup + "/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": "web", "namespace": demo.Namespace, "uid": "c-web"},
		"spec":     map[string]any{"infrastructureRef": map[string]any{"apiGroup": object.Group, "kind": "DockerCluster", "name": "web"}},
	}}
	l := heldBy("root@captf-m-web-0-apply-a1-d72d2a-x7k2p")
	l.Name = object.LockLeaseName(object.DefaultWorkspace, machine.Suffix())
	k := newCluster(t, []runtime.Object{l}, m, capi)
	x, _ := k.explain(t, func(t *Target) { t.Object, t.Lease, t.Arg = &machine, l.Name, "terraformmachine/web-0" })
	want := "Nothing: Cluster web uses infrastructure " + object.Group + " DockerCluster, not a TerraformCluster: CAPTF's owner gate ClusterNotTerraform stops before the lock check, so no Job starts."
	if x.Verdict != v1alpha1.Stale || x.CAPTFClears || !strings.HasPrefix(x.ControllerAction, want) {
		t.Errorf("%s, clears %v, action %q", x.Verdict, x.CAPTFClears, x.ControllerAction)
	}
	if n := k.Count("get", "clusters"); n != 1 {
		t.Errorf("%d gets of the Cluster, want 1", n)
	}
}

// What keeps the lock from being read is an error, not an explanation.
func TestExplainErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		lease string
		setup func(*fakeapi.Server)
		want  string
	}{
		{"not a lock Lease", "captf-run-" + demo.Suffix(), nil, "is not a Terraform lock Lease"},
		{"Lease refused", lockName, func(s *fakeapi.Server) { refuse(s, "get", "*", "leases") }, "forbidden"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := newCluster(t, []runtime.Object{heldBy("root@" + runPod)}, captfObject(nil))
			if c.setup != nil {
				c.setup(k.Server)
			}
			x, _, err := k.read(Target{Namespace: demo.Namespace, Lease: c.lease, Object: &demo, Arg: demoArg}, nil)
			if err == nil || x != nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("explanation %v, error %v; want an error saying %q", x, err, c.want)
			}
		})
	}
}
