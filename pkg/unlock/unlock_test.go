package unlock

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/audit"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

var (
	demo    = object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "demo"}
	demoPod = "captf-c-demo-apply-a1-d72d2a-x7k2p"
	lockID  = "3c1e9a5b-7d2f-0e4a-8b6c-1f2e3d4c5b6a"
	name    = object.LockLeaseName("default", demo.Suffix())
)

func lease(holder *string, who string) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "default", ResourceVersion: "7",
		Labels:      map[string]string{"tfstate": "true", inspect.LabelSecretSuffix: demo.Suffix(), inspect.LabelWorkspace: "default"},
		Annotations: map[string]string{"keep": "me"},
	}}
	l.Spec.HolderIdentity = holder
	if who != "" {
		l.Annotations[inspect.AnnotationLock] = fmt.Sprintf(`{"ID":%q,"Operation":"OperationTypeApply","Who":%q,"Version":"1.11.4","Created":"2026-11-30T10:00:00Z"}`, *holder, who)
	}
	return l
}

// casReactor makes the fake behave as the API server does for Leases:
// every write bumps resourceVersion and an update carrying a stale one is
// a 409 Conflict. The fake enforces neither by itself.
func casReactor(c *fake.Clientset) {
	c.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		l := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease)
		cur, err := c.Tracker().Get(a.GetResource(), l.Namespace, l.Name)
		if err != nil {
			return true, nil, err
		}
		if cur.(*coordinationv1.Lease).ResourceVersion != l.ResourceVersion {
			return true, nil, apierrors.NewConflict(a.GetResource().GroupResource(), l.Name, fmt.Errorf("the object has been modified"))
		}
		l = l.DeepCopy()
		n, _ := strconv.Atoi(l.ResourceVersion)
		l.ResourceVersion = strconv.Itoa(n + 1)
		return true, l, c.Tracker().Update(a.GetResource(), l, l.Namespace)
	})
}

func setup(objs ...runtime.Object) (*Unlocker, *fake.Clientset) {
	c := fake.NewClientset(objs...)
	casReactor(c)
	scheme := metadatafake.NewTestScheme()
	_ = metav1.AddMetaToScheme(scheme)
	m := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: object.Group + "/" + object.Version, Kind: demo.Kind.Name},
		ObjectMeta: metav1.ObjectMeta{Name: demo.Name, Namespace: demo.Namespace},
	}
	md := metadatafake.NewSimpleMetadataClient(scheme, m)
	return &Unlocker{Inspector: &inspect.Inspector{Client: c, Metadata: md}, Client: c}, c
}

func pod(phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: demoPod, Namespace: "default"}, Status: corev1.PodStatus{Phase: phase}}
}

func get(t *testing.T, c *fake.Clientset) *coordinationv1.Lease {
	t.Helper()
	l, err := c.CoordinationV1().Leases("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// run unlocks as the command does: Unlock, then Record.
func run(t *testing.T, u *Unlocker, o Options) *Outcome {
	t.Helper()
	out, err := u.Unlock(context.Background(), "default", name, o)
	if err != nil {
		t.Fatal(err)
	}
	u.Record(context.Background(), out, o)
	return out
}

// Unlock's one write is the Lease's; the Event comes with Record, after
// the caller has reported the write.
func TestUnlockWritesOnlyTheLease(t *testing.T) {
	u, c := setup(lease(&lockID, "root@"+demoPod))
	out, err := u.Unlock(context.Background(), "default", name, Options{Confirm: true})
	if err != nil || out.Action != v1alpha1.ActionUnlocked {
		t.Fatalf("%v %v", out, err)
	}
	var writes []string
	for _, a := range c.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" {
			writes = append(writes, a.GetVerb()+" "+a.GetResource().Resource)
		}
	}
	// Who asks is looked up (SelfSubjectReview, not a write to the
	// cluster's state) before the write, so the Event cannot lack it.
	if !reflect.DeepEqual(writes, []string{"create selfsubjectreviews", "update leases"}) {
		t.Errorf("writes %v", writes)
	}
	u.Record(context.Background(), out, Options{Confirm: true})
	if evs, _ := c.EventsV1().Events("default").List(context.Background(), metav1.ListOptions{}); len(evs.Items) != 1 || out.Event == "" {
		t.Errorf("Record wrote no Event: %v", evs)
	}
}

func TestStaleIsUnlockedExactlyAsTheRuntimes(t *testing.T) {
	u, c := setup(lease(&lockID, "root@"+demoPod))
	out := run(t, u, Options{Confirm: true})
	if out.Action != v1alpha1.ActionUnlocked {
		t.Fatalf("%s: %s", out.Action, out.Message)
	}
	l := get(t, c)
	if l.Spec.HolderIdentity != nil {
		t.Errorf("holder %q, want null", *l.Spec.HolderIdentity)
	}
	if _, ok := l.Annotations[inspect.AnnotationLock]; ok || l.Annotations["keep"] != "me" || l.Labels["tfstate"] != "true" {
		t.Errorf("annotations %v labels %v", l.Annotations, l.Labels)
	}
	if l.ResourceVersion != "8" {
		t.Errorf("resourceVersion %s: one write expected", l.ResourceVersion)
	}
	evs, err := c.EventsV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(evs.Items) != 1 {
		t.Fatalf("events %v, %v", evs, err)
	}
	ev := evs.Items[0]
	if ev.Reason != audit.Reason || ev.Type != "Warning" || ev.Regarding.Kind != "TerraformCluster" || ev.Regarding.Name != "demo" ||
		!strings.Contains(ev.Note, lockID) || !strings.Contains(ev.Note, "root@"+demoPod) || !strings.Contains(ev.Note, "OperationTypeApply") {
		t.Errorf("event %+v", ev)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	u, c := setup(lease(&lockID, "root@"+demoPod))
	out := run(t, u, Options{})
	if out.Action != v1alpha1.WouldUnlock || !out.DryRun {
		t.Fatalf("%s", out.Action)
	}
	for _, a := range c.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" {
			t.Errorf("dry run wrote: %v", a)
		}
	}
	if ch := out.API().Change; ch == nil || ch.ResourceVersion != "7" || ch.HolderIdentity != lockID || ch.RemoveAnnotation != inspect.AnnotationLock {
		t.Errorf("planned change %+v", ch)
	}
}

// Check on every verdict with every guard it tells apart: no flag, --id
// with the current ID or another, --force with and without --id. Each row
// gives the whole Decision: action, exact message, and the flags Next offers.
func TestGuards(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	const reason = "the reason Classify gave"
	running := &inspect.Pod{Name: demoPod, Exists: true, Phase: corev1.PodRunning}
	pending := &inspect.Pod{Name: demoPod, Exists: true, Phase: corev1.PodPending}
	leaving := &inspect.Pod{Name: demoPod, Exists: true, Phase: corev1.PodRunning, Terminating: true}
	unscheduled := &inspect.Pod{Name: demoPod, Exists: true}

	held := inspect.ParseLease(lease(&lockID, "alice@laptop"))
	free := inspect.ParseLease(lease(nil, ""))
	noInfo := inspect.ParseLease(lease(&lockID, ""))
	// holderIdentity "": the ID to name is the lock info's.
	emptyHolder := lease(&lockID, "alice@laptop")
	emptyHolder.Spec.HolderIdentity = new(string)
	infoID := inspect.ParseLease(emptyHolder)
	// Lock info without Created: no age in the holder.
	ageless := lease(&lockID, "alice@laptop")
	ageless.Annotations[inspect.AnnotationLock] = fmt.Sprintf(`{"ID":%q,"Operation":"OperationTypePlan","Who":"alice@laptop"}`, lockID)
	noAge := inspect.ParseLease(ageless)

	alice := fmt.Sprintf(`"alice@laptop" (OperationTypeApply, for 120m, lock ID %q)`, lockID)
	nobody := fmt.Sprintf("an unidentifiable holder (lock ID %q)", lockID)
	none := Guard{}
	force := Guard{Force: true}
	rightID := Guard{ID: lockID, IDGiven: true}
	wrongID := Guard{ID: "the-old-one", IDGiven: true}
	emptyID := Guard{ID: "", IDGiven: true}
	forceRight := Guard{Force: true, ID: lockID, IDGiven: true}
	forceWrong := Guard{Force: true, ID: "the-old-one", IDGiven: true}
	withID := &Guard{ID: lockID, IDGiven: true}
	forceWithID := &Guard{Force: true, ID: lockID, IDGiven: true}
	notCurrent := func(given, holder string, v v1alpha1.Verdict) string {
		return fmt.Sprintf("the lock ID given (%q) is not the current one (%q): the lock is now held by %s (%s); look at it again before clearing it", given, lockID, holder, v)
	}
	refusedForeign := func(v v1alpha1.Verdict, holder string) string {
		return fmt.Sprintf("the lock is %s: %s. It is held by %s. A foreign lock may be mid-write (a workstation running terraform state rm, say), and nobody here can know. Once the holder is gone, run the last command below: it names the current lock ID with --id", v, reason, holder)
	}
	livePod := func(state string) string {
		return "holder pod " + demoPod + " is " + state + ": clearing its lock lets two runs write the same state; look at the pod first. Only if it is certainly not writing, run the last command below (--force with the current lock ID)"
	}
	forceNeedsID := "--force needs --id with the current lock ID, as terraform force-unlock does, so that only the holder you looked at is cleared: holder pod " + demoPod + " is Pending. The command below names it"

	cases := []struct {
		name    string
		lease   inspect.Lease
		verdict v1alpha1.Verdict
		pod     *inspect.Pod
		guard   Guard
		want    Decision
	}{
		// Unlocked: nothing to clear, whatever the flags, a wrong ID included.
		{"unlocked", free, v1alpha1.Unlocked, nil, none, Decision{Action: v1alpha1.AlreadyUnlocked, Message: "the lock is already free"}},
		{"unlocked, forced with a wrong id", free, v1alpha1.Unlocked, nil, forceWrong, Decision{Action: v1alpha1.AlreadyUnlocked, Message: "the lock is already free"}},

		// Stale: cleared without a flag; a given ID must still be the current one.
		{"stale", held, v1alpha1.Stale, nil, none, Decision{Action: v1alpha1.ActionUnlocked, Message: "the lock is stale: " + reason}},
		{"stale, forced", held, v1alpha1.Stale, nil, force, Decision{Action: v1alpha1.ActionUnlocked, Message: "the lock is stale: " + reason}},
		{"stale, right id", held, v1alpha1.Stale, nil, rightID, Decision{Action: v1alpha1.ActionUnlocked, Message: "the lock is stale: " + reason}},
		{"stale, wrong id", held, v1alpha1.Stale, nil, wrongID, Decision{Action: v1alpha1.Refused, Message: notCurrent("the-old-one", alice, v1alpha1.Stale)}},
		{"stale, empty id", held, v1alpha1.Stale, nil, emptyID, Decision{Action: v1alpha1.Refused, Message: notCurrent("", alice, v1alpha1.Stale)}},

		// Live: only --force with the current ID clears it.
		{"live", held, v1alpha1.Live, running, none, Decision{Action: v1alpha1.Refused, Message: livePod("Running"), Next: forceWithID}},
		{"live, right id is not enough", held, v1alpha1.Live, running, rightID, Decision{Action: v1alpha1.Refused, Message: livePod("Running"), Next: forceWithID}},
		{"live, terminating pod", held, v1alpha1.Live, leaving, none, Decision{Action: v1alpha1.Refused, Message: livePod("Running and terminating"), Next: forceWithID}},
		{"live, pod in no phase", held, v1alpha1.Live, unscheduled, none, Decision{Action: v1alpha1.Refused, Message: livePod("in no phase yet"), Next: forceWithID}},
		{"live, forced without the id", held, v1alpha1.Live, pending, force, Decision{Action: v1alpha1.Refused, Message: forceNeedsID, Next: forceWithID}},
		{"live, forced with the id", held, v1alpha1.Live, pending, forceRight, Decision{Action: v1alpha1.ActionUnlocked, Message: "--force with the current lock ID: clearing a lock whose holder pod " + demoPod + " is Pending; the two runs may now write the same state"}},
		{"live, forced with a replaced holder's id", held, v1alpha1.Live, running, forceWrong, Decision{Action: v1alpha1.Refused, Message: notCurrent("the-old-one", alice, v1alpha1.Live)}},
		{"live, wrong id", held, v1alpha1.Live, running, wrongID, Decision{Action: v1alpha1.Refused, Message: notCurrent("the-old-one", alice, v1alpha1.Live)}},

		// Foreign and Unknown: --id with the current ID, and --force adds nothing.
		{"foreign", held, v1alpha1.Foreign, nil, none, Decision{Action: v1alpha1.Refused, Message: refusedForeign(v1alpha1.Foreign, alice), Next: withID}},
		{"foreign, forced is not enough", held, v1alpha1.Foreign, nil, force, Decision{Action: v1alpha1.Refused, Message: refusedForeign(v1alpha1.Foreign, alice), Next: withID}},
		{"foreign, right id", held, v1alpha1.Foreign, nil, rightID, Decision{Action: v1alpha1.ActionUnlocked, Message: "--id matches the lock held by " + alice}},
		{"foreign, forced with the right id", held, v1alpha1.Foreign, nil, forceRight, Decision{Action: v1alpha1.ActionUnlocked, Message: "--id matches the lock held by " + alice}},
		{"foreign, wrong id", held, v1alpha1.Foreign, nil, wrongID, Decision{Action: v1alpha1.Refused, Message: notCurrent("the-old-one", alice, v1alpha1.Foreign)}},
		{"foreign, no age", noAge, v1alpha1.Foreign, nil, none, Decision{Action: v1alpha1.Refused, Message: refusedForeign(v1alpha1.Foreign, fmt.Sprintf(`"alice@laptop" (OperationTypePlan, lock ID %q)`, lockID)), Next: withID}},
		{"unknown", noInfo, v1alpha1.Unknown, nil, none, Decision{Action: v1alpha1.Refused, Message: refusedForeign(v1alpha1.Unknown, nobody), Next: withID}},
		{"unknown, forced is not enough", noInfo, v1alpha1.Unknown, nil, force, Decision{Action: v1alpha1.Refused, Message: refusedForeign(v1alpha1.Unknown, nobody), Next: withID}},
		{"unknown, right id", noInfo, v1alpha1.Unknown, nil, rightID, Decision{Action: v1alpha1.ActionUnlocked, Message: "--id matches the lock held by " + nobody}},
		{"unknown, wrong id", noInfo, v1alpha1.Unknown, nil, wrongID, Decision{Action: v1alpha1.Refused, Message: notCurrent("the-old-one", nobody, v1alpha1.Unknown)}},

		// holderIdentity "": the current ID is the lock info's, not "".
		{"empty holder, info's id", infoID, v1alpha1.Foreign, nil, rightID, Decision{Action: v1alpha1.ActionUnlocked, Message: "--id matches the lock held by " + alice}},
		{"empty holder, empty id", infoID, v1alpha1.Foreign, nil, emptyID, Decision{Action: v1alpha1.Refused, Message: notCurrent("", alice, v1alpha1.Foreign)}},
		{"empty holder, no flag", infoID, v1alpha1.Foreign, nil, none, Decision{Action: v1alpha1.Refused, Message: refusedForeign(v1alpha1.Foreign, alice), Next: withID}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := inspect.Result{
				Facts:    inspect.Facts{Lease: c.lease, Pod: c.pod},
				Decision: inspect.Decision{Verdict: c.verdict, Reason: reason},
			}
			got := Check(r, c.guard, now)
			if got.Action != c.want.Action {
				t.Errorf("action %s, want %s", got.Action, c.want.Action)
			}
			if got.Message != c.want.Message {
				t.Errorf("message\n got %q\nwant %q", got.Message, c.want.Message)
			}
			if !reflect.DeepEqual(got.Next, c.want.Next) {
				t.Errorf("next %+v, want %+v", got.Next, c.want.Next)
			}
		})
	}
}

// Unlock turns a refusal into the commands to run next: a look at a live
// holder pod, then the unlock with the flags Next gives; or, when the ID
// given is no longer the current one, a fresh look at the lock.
func TestRefusalSaysWhatToRunNext(t *testing.T) {
	cases := []struct {
		name  string
		lease *coordinationv1.Lease
		pod   *corev1.Pod
		guard Guard
		want  []string
	}{
		{"live", lease(&lockID, "root@"+demoPod), pod(corev1.PodRunning), Guard{}, []string{
			"kubectl logs -n default " + demoPod,
			"kubectl describe pod -n default " + demoPod,
			"kubectl captf unlock lease/" + name + " -n default --force --id '" + lockID + "' --confirm",
		}},
		{"foreign", lease(&lockID, "alice@laptop"), nil, Guard{Force: true}, []string{
			"kubectl captf unlock lease/" + name + " -n default --id '" + lockID + "' --confirm",
		}},
		{"wrong id", lease(&lockID, "root@"+demoPod), nil, Guard{ID: "nope", IDGiven: true}, []string{
			"kubectl captf explain lease/" + name + " -n default",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs := []runtime.Object{c.lease}
			if c.pod != nil {
				objs = append(objs, c.pod)
			}
			u, _ := setup(objs...)
			out := run(t, u, Options{Guard: c.guard})
			if out.Action != v1alpha1.Refused {
				t.Fatalf("action %s (%s)", out.Action, out.Message)
			}
			var got []string
			for _, cmd := range out.Commands {
				got = append(got, cmd.Command)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("commands\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// A writer that changes the Lease between the read and the write wins:
// the update carries the old resourceVersion and is rejected.
func TestRaceIsAConflict(t *testing.T) {
	u, c := setup(lease(&lockID, "root@"+demoPod))
	other := "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
	u.BeforeWrite = func(ctx context.Context) error {
		l := get(t, c)
		l.Spec.HolderIdentity = &other
		_, err := c.CoordinationV1().Leases("default").Update(ctx, l, metav1.UpdateOptions{})
		return err
	}
	out := run(t, u, Options{Confirm: true})
	if out.Action != v1alpha1.Conflict {
		t.Fatalf("%s: %s", out.Action, out.Message)
	}
	if l := get(t, c); l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != other {
		t.Errorf("the new lock was not kept: %v", l.Spec.HolderIdentity)
	}
}

func TestUpdateForbiddenNamesThePermission(t *testing.T) {
	u, c := setup(lease(&lockID, "root@"+demoPod))
	c.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(a.GetResource().GroupResource(), name, fmt.Errorf("no"))
	})
	_, err := u.Unlock(context.Background(), "default", name, Options{Confirm: true})
	if err == nil || !strings.Contains(err.Error(), `cannot update leases in namespace "default" (unlocking needs update on leases)`) {
		t.Errorf("err = %v", err)
	}
}

func TestTruncateKeepsRunes(t *testing.T) {
	if got := truncate("ab€", 4); got != "ab" {
		t.Errorf("truncate = %q", got)
	}
}
