package unlock

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/audit"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/inspect/cluster"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

var (
	demo    = object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "demo"}
	demoPod = "captf-c-demo-apply-a1-d72d2a-x7k2p"
	lockID  = "3c1e9a5b-7d2f-0e4a-8b6c-1f2e3d4c5b6a"
	name    = object.LockLeaseName("default", demo.Suffix())
)

func lease(holder *string, who string) *coordinationv1.Lease {
	l := leaseOf(demo, holder, who)
	l.ResourceVersion = "7"
	return l
}

// leaseOf is ref's lock Lease, held by holder (nil: free) with lock info
// naming who ("": none).
func leaseOf(ref object.Ref, holder *string, who string) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Name: object.LockLeaseName("default", ref.Suffix()), Namespace: ref.Namespace,
		Labels:      map[string]string{"tfstate": "true", inspect.LabelSecretSuffix: ref.Suffix(), inspect.LabelWorkspace: "default"},
		Annotations: map[string]string{"keep": "me"},
	}}
	l.Spec.HolderIdentity = holder
	if who != "" {
		l.Annotations[inspect.AnnotationLock] = fmt.Sprintf(`{"ID":%q,"Operation":"OperationTypeApply","Who":%q,"Version":"1.11.4","Created":"2026-11-30T10:00:00Z"}`, *holder, who)
	}
	return l
}

// captfObject is a TerraformCluster in full, owned by its Cluster.
func captfObject(ref object.Ref) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(object.Group + "/" + object.Version)
	u.SetKind(ref.Kind.Name)
	u.SetNamespace(ref.Namespace)
	u.SetName(ref.Name)
	u.SetUID(types.UID("uid-" + ref.Name))
	u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster", Name: ref.Name, UID: "c-1"}})
	return u
}

var (
	leasesGVR = coordinationv1.SchemeGroupVersion.WithResource("leases")
	eventsGVR = eventsv1.SchemeGroupVersion.WithResource("events")
)

// serve starts an API server (internal/fakeapi) holding objs. It answers
// an update at a stale resourceVersion with a real 409 Conflict. At the
// test's end, no request may have written a Secret.
func serve(t *testing.T, objs ...runtime.Object) *fakeapi.Server {
	t.Helper()
	srv := fakeapi.New(t, objs...)
	t.Cleanup(func() {
		for _, r := range srv.Requests() {
			if r.Resource == "secrets" && r.Method != http.MethodGet {
				t.Errorf("a Secret was written: %s %s", r.Method, r.Path)
			}
		}
	})
	return srv
}

// setup serves objs and demo, and an Unlocker over them.
func setup(t *testing.T, objs ...runtime.Object) (*Unlocker, *fakeapi.Server) {
	t.Helper()
	srv := serve(t, append(objs, captfObject(demo))...)
	return unlocker(t, srv), srv
}

// unlocker is an Unlocker over srv with the clients production builds
// (cluster.ForConfig, as pkg/cmd's clients).
func unlocker(t *testing.T, srv *fakeapi.Server) *Unlocker {
	t.Helper()
	r, err := cluster.ForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	return &Unlocker{Reader: r, Client: r.Client, Dynamic: r.Dynamic}
}

func pod(phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: demoPod, Namespace: "default"}, Status: corev1.PodStatus{Phase: phase}}
}

// get reads a lock Lease as the server holds it, without a request.
func get(t *testing.T, srv *fakeapi.Server, lease string) *coordinationv1.Lease {
	t.Helper()
	o, err := srv.Tracker().Get(leasesGVR, "default", lease)
	if err != nil {
		t.Fatal(err)
	}
	return o.(*coordinationv1.Lease)
}

// events are the events.k8s.io Events the server holds.
func events(t *testing.T, srv *fakeapi.Server) []eventsv1.Event {
	t.Helper()
	o, err := srv.Tracker().List(eventsGVR, eventsv1.SchemeGroupVersion.WithKind("Event"), "default")
	if err != nil {
		t.Fatal(err)
	}
	return o.(*eventsv1.EventList).Items
}

// said is a request as these tests compare them: verb, resource and name.
func said(r fakeapi.Request) string {
	s := r.Verb + " " + r.Resource
	if r.Name != "" {
		s += "/" + r.Name
	}
	return s
}

func saidAll(reqs []fakeapi.Request) []string {
	out := []string{}
	for _, r := range reqs {
		out = append(out, said(r))
	}
	return out
}

// writes are the requests that are not reads.
func writes(reqs []fakeapi.Request) []string {
	out := []string{}
	for _, r := range reqs {
		if r.Method != http.MethodGet {
			out = append(out, said(r))
		}
	}
	return out
}

// leaseUpdates are the Leases the updates sent, as sent.
func leaseUpdates(t *testing.T, srv *fakeapi.Server) []*coordinationv1.Lease {
	t.Helper()
	var out []*coordinationv1.Lease
	for _, r := range srv.Requests() {
		if r.Verb != "update" || r.Resource != "leases" {
			continue
		}
		o, _, err := scheme.Codecs.UniversalDeserializer().Decode(r.Body, nil, nil)
		if err != nil {
			t.Fatalf("decoding the update of %s: %v", r.Name, err)
		}
		out = append(out, o.(*coordinationv1.Lease))
	}
	return out
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
	u, srv := setup(t, lease(&lockID, "root@"+demoPod))
	out, err := u.Unlock(context.Background(), "default", name, Options{Confirm: true})
	if err != nil || out.Action != v1alpha1.ActionUnlocked {
		t.Fatalf("%v %v", out, err)
	}
	// Who asks is looked up (SelfSubjectReview, not a write to the
	// cluster's state) before the write, so the Event cannot lack it.
	if w := writes(srv.Requests()); !reflect.DeepEqual(w, []string{"create selfsubjectreviews", "update leases/" + name}) {
		t.Errorf("writes %v", w)
	}
	u.Record(context.Background(), out, Options{Confirm: true})
	if evs := events(t, srv); len(evs) != 1 || out.Event == "" || evs[0].Name != out.Event {
		t.Errorf("Record wrote no Event: %v, %q", evs, out.Event)
	}
	if w := writes(srv.Requests()); !reflect.DeepEqual(w, []string{"create selfsubjectreviews", "update leases/" + name, "create events"}) {
		t.Errorf("writes %v", w)
	}
}

// A stale lock is cleared as the runtimes' own Unlock clears it, with one
// update carrying the resourceVersion read, and exactly these requests:
// the lock's read (the Lease by name, the Jobs and the three kinds listed
// concurrently, the holder pod by name, the owner's namespace), who asks,
// the write, the Event.
func TestStaleIsUnlockedExactlyAsTheRuntimes(t *testing.T) {
	u, srv := setup(t, lease(&lockID, "root@"+demoPod))
	out := run(t, u, Options{Confirm: true})
	if out.Action != v1alpha1.ActionUnlocked || out.Result.Decision.Verdict != v1alpha1.Stale {
		t.Fatalf("%s (%s): %s", out.Action, out.Result.Decision.Verdict, out.Message)
	}
	reqs := saidAll(srv.Requests())
	if len(reqs) != 10 {
		t.Fatalf("requests %q", reqs)
	}
	lists := append([]string(nil), reqs[1:5]...)
	slices.Sort(lists)
	want := []string{"list jobs", "list terraformclusters", "list terraformmachinepools", "list terraformmachines"}
	if reqs[0] != "get leases/"+name || !reflect.DeepEqual(lists, want) ||
		!reflect.DeepEqual(reqs[5:], []string{"get pods/" + demoPod, "get namespaces/default", "create selfsubjectreviews", "update leases/" + name, "create events"}) {
		t.Errorf("requests %q", reqs)
	}
	sent := leaseUpdates(t, srv)
	if len(sent) != 1 || sent[0].ResourceVersion != "7" {
		t.Fatalf("updates %+v: one, at the resourceVersion read, expected", sent)
	}
	l := get(t, srv, name)
	if l.Spec.HolderIdentity != nil {
		t.Errorf("holder %q, want null", *l.Spec.HolderIdentity)
	}
	if _, ok := l.Annotations[inspect.AnnotationLock]; ok || l.Annotations["keep"] != "me" || l.Labels["tfstate"] != "true" {
		t.Errorf("annotations %v labels %v", l.Annotations, l.Labels)
	}
	if l.ResourceVersion == "7" {
		t.Errorf("resourceVersion %s: the write was not stored", l.ResourceVersion)
	}
	evs := events(t, srv)
	if len(evs) != 1 {
		t.Fatalf("events %v", evs)
	}
	ev := evs[0]
	if ev.Reason != audit.Reason || ev.Type != "Warning" || ev.Regarding.Kind != "TerraformCluster" || ev.Regarding.Name != "demo" || ev.Regarding.UID != "uid-demo" ||
		!strings.Contains(ev.Note, lockID) || !strings.Contains(ev.Note, "root@"+demoPod) || !strings.Contains(ev.Note, "OperationTypeApply") ||
		!strings.Contains(ev.Note, fakeapi.DefaultUser) {
		t.Errorf("event %+v", ev)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	u, srv := setup(t, lease(&lockID, "root@"+demoPod))
	out := run(t, u, Options{})
	if out.Action != v1alpha1.WouldUnlock || !out.DryRun {
		t.Fatalf("%s", out.Action)
	}
	if w := writes(srv.Requests()); len(w) != 0 {
		t.Errorf("dry run wrote: %v", w)
	}
	if ch := out.API().Change; ch == nil || ch.ResourceVersion != "7" || ch.HolderIdentity != lockID || ch.RemoveAnnotation != inspect.AnnotationLock {
		t.Errorf("planned change %+v", ch)
	}
	if l := get(t, srv, name); l.ResourceVersion != "7" || l.Spec.HolderIdentity == nil {
		t.Errorf("the Lease changed: %+v", l)
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

	alice := fmt.Sprintf(`"alice@laptop" (apply, for 120m, lock ID %q)`, lockID)
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
		{"foreign, no age", noAge, v1alpha1.Foreign, nil, none, Decision{Action: v1alpha1.Refused, Message: refusedForeign(v1alpha1.Foreign, fmt.Sprintf(`"alice@laptop" (plan, lock ID %q)`, lockID)), Next: withID}},
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
			u, srv := setup(t, objs...)
			out := run(t, u, Options{Guard: c.guard, Confirm: true})
			if out.Action != v1alpha1.Refused {
				t.Fatalf("action %s (%s)", out.Action, out.Message)
			}
			if w := writes(srv.Requests()); len(w) != 0 {
				t.Errorf("a refusal wrote: %v", w)
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
// the update carries the old resourceVersion, the server answers 409
// Conflict, and nothing is written, not even the Event.
func TestRaceIsAConflict(t *testing.T) {
	u, srv := setup(t, lease(&lockID, "root@"+demoPod))
	other := "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
	var taken string
	u.BeforeWrite = func(ctx context.Context) error {
		l, err := u.Client.CoordinationV1().Leases("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		l.Spec.HolderIdentity = &other
		l, err = u.Client.CoordinationV1().Leases("default").Update(ctx, l, metav1.UpdateOptions{})
		if err == nil {
			taken = l.ResourceVersion
		}
		return err
	}
	out := run(t, u, Options{Confirm: true})
	if out.Action != v1alpha1.Conflict {
		t.Fatalf("%s: %s", out.Action, out.Message)
	}
	l := get(t, srv, name)
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != other || l.ResourceVersion != taken {
		t.Errorf("the new lock was not kept: holder %v, resourceVersion %s, want %s", l.Spec.HolderIdentity, l.ResourceVersion, taken)
	}
	// The other writer's update, then the unlock's, at the version it read.
	sent := leaseUpdates(t, srv)
	if len(sent) != 2 || sent[1].ResourceVersion != "7" || sent[1].Spec.HolderIdentity != nil {
		t.Errorf("updates %+v", sent)
	}
	if n := srv.Count("create", "events"); n != 0 || out.Event != "" {
		t.Errorf("%d Events for a conflict", n)
	}
}

// A live own runner pod's lock is refused without the override, --force
// alone included; --force with the current ID clears it.
func TestLiveHolderNeedsTheOverride(t *testing.T) {
	for _, c := range []struct {
		name   string
		guard  Guard
		action v1alpha1.Action
	}{
		{"no flag", Guard{}, v1alpha1.Refused},
		{"--force alone", Guard{Force: true}, v1alpha1.Refused},
		{"--id alone", Guard{ID: lockID, IDGiven: true}, v1alpha1.Refused},
		{"--force --id", Guard{Force: true, ID: lockID, IDGiven: true}, v1alpha1.ActionUnlocked},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, srv := setup(t, lease(&lockID, "root@"+demoPod), pod(corev1.PodRunning))
			out := run(t, u, Options{Guard: c.guard, Confirm: true})
			if out.Action != c.action || out.Result.Decision.Verdict != v1alpha1.Live {
				t.Fatalf("%s (%s): %s", out.Action, out.Result.Decision.Verdict, out.Message)
			}
			l := get(t, srv, name)
			want := []string{}
			if c.action == v1alpha1.ActionUnlocked {
				want = []string{"create selfsubjectreviews", "update leases/" + name, "create events"}
				if l.Spec.HolderIdentity != nil {
					t.Errorf("holder %q, want null", *l.Spec.HolderIdentity)
				}
			} else if l.Spec.HolderIdentity == nil || l.ResourceVersion != "7" {
				t.Errorf("a refused lock changed: %+v", l)
			}
			if w := writes(srv.Requests()); !reflect.DeepEqual(w, want) {
				t.Errorf("writes %v, want %v", w, want)
			}
		})
	}
}

func TestUpdateForbiddenNamesThePermission(t *testing.T) {
	u, srv := setup(t, lease(&lockID, "root@"+demoPod))
	srv.Intercept(fakeapi.Fail(func(r fakeapi.Request) bool { return r.Verb == "update" && r.Resource == "leases" },
		apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, name, fmt.Errorf("no"))))
	_, err := u.Unlock(context.Background(), "default", name, Options{Confirm: true})
	if err == nil || !strings.Contains(err.Error(), `cannot update leases in namespace "default" (unlocking needs update on leases)`) || !apierrors.IsForbidden(err) {
		t.Errorf("err = %v", err)
	}
	if l := get(t, srv, name); l.ResourceVersion != "7" {
		t.Errorf("the Lease changed: %+v", l)
	}
}

// allStale is a namespace of n stale locks, of demo0 … demo<n-1>, whose
// holder pods are gone.
func allStale(n int) (objs []runtime.Object, refs []object.Ref) {
	for i := range n {
		ref := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: fmt.Sprintf("demo%d", i)}
		id := fmt.Sprintf("%08d-0000-0000-0000-000000000000", i)
		objs = append(objs, leaseOf(ref, &id, "root@"+holderPod(ref)), captfObject(ref))
		refs = append(refs, ref)
	}
	return objs, refs
}

func holderPod(ref object.Ref) string { return "captf-c-" + ref.Name + "-apply-a1-d72d2a-x7k2p" }

// readAll reads the namespace as unlock --all-stale does, and returns its
// Stale locks, in the order it unlocks them.
func readAll(t *testing.T, u *Unlocker) (*inspect.Snapshot, []inspect.Lease) {
	t.Helper()
	snap, err := u.Reader.Read(context.Background(), inspect.Scope{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	var stale []inspect.Lease
	for _, r := range inspect.Decide(snap).Results {
		if r.Decision.Verdict == v1alpha1.Stale {
			stale = append(stale, r.Facts.Lease)
		}
	}
	return snap, stale
}

// A dry run of --all-stale decides from the snapshot: not one request.
func TestUnlockInDryRunReadsNothing(t *testing.T) {
	objs, refs := allStale(4)
	srv := serve(t, objs...)
	u := unlocker(t, srv)
	snap, stale := readAll(t, u)
	if len(stale) != len(refs) {
		t.Fatalf("%d stale locks, want %d", len(stale), len(refs))
	}
	srv.ResetRequests()
	for _, l := range stale {
		o := Options{}
		out, err := u.UnlockIn(context.Background(), snap, l.Namespace, l.Name, o)
		if err != nil {
			t.Fatal(err)
		}
		u.Record(context.Background(), out, o)
		if out.Action != v1alpha1.WouldUnlock || !out.DryRun || out.API().Change == nil || out.API().Change.ResourceVersion != l.ResourceVersion {
			t.Errorf("%s: %s (%s)", l.Name, out.Action, out.Message)
		}
	}
	if reqs := srv.Requests(); len(reqs) != 0 {
		t.Errorf("a dry run made %d requests: %q", len(reqs), saidAll(reqs))
	}
}

// --all-stale with --confirm reads each lock again just before its write,
// and nothing more: per lock, the Lease and its holder pod by name, the
// update, the Event (and who asks, once a run). A lock that changed since
// the snapshot is decided again from what was read again: its holder pod
// running again, or another holder taking it, and it is not cleared.
func TestUnlockInConfirmRereadsEachLock(t *testing.T) {
	objs, refs := allStale(6)
	srv := serve(t, objs...)
	u := unlocker(t, srv)
	snap, stale := readAll(t, u)
	if len(stale) != len(refs) {
		t.Fatalf("%d stale locks, want %d", len(stale), len(refs))
	}
	// Between the snapshot and the unlock: demo1's holder pod is running
	// (again), and alice takes demo4's lock.
	back, taken := refs[1], refs[4]
	if err := srv.Tracker().Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: holderPod(back), Namespace: "default"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}); err != nil {
		t.Fatal(err)
	}
	aliceID := "a11ce000-0000-0000-0000-000000000000"
	alice := leaseOf(taken, &aliceID, "alice@laptop")
	alice.ResourceVersion = get(t, srv, alice.Name).ResourceVersion
	if err := srv.Tracker().Update(leasesGVR, alice, "default"); err != nil {
		t.Fatal(err)
	}
	leaseName := func(r object.Ref) string { return object.LockLeaseName("default", r.Suffix()) }

	srv.ResetRequests()
	total, asked := 0, false
	for _, l := range stale {
		o := Options{Confirm: true}
		out, err := u.UnlockIn(context.Background(), snap, l.Namespace, l.Name, o)
		if err != nil {
			t.Fatal(err)
		}
		u.Record(context.Background(), out, o)
		reqs := srv.Requests()
		srv.ResetRequests()
		total += len(reqs)
		got := saidAll(reqs)
		switch l.Name {
		case leaseName(back):
			if out.Action != v1alpha1.Refused || out.Result.Decision.Verdict != v1alpha1.Live {
				t.Errorf("a holder running again: %s (%s)", out.Action, out.Result.Decision.Verdict)
			}
			if want := []string{"get leases/" + l.Name, "get pods/" + holderPod(back)}; !reflect.DeepEqual(got, want) {
				t.Errorf("%s: requests %q, want %q", l.Name, got, want)
			}
		case leaseName(taken):
			if out.Action != v1alpha1.Refused || out.Result.Decision.Verdict != v1alpha1.Foreign {
				t.Errorf("a lock taken by another holder: %s (%s)", out.Action, out.Result.Decision.Verdict)
			}
			// laptop can be no runner pod's name: not read.
			if want := []string{"get leases/" + l.Name}; !reflect.DeepEqual(got, want) {
				t.Errorf("%s: requests %q, want %q", l.Name, got, want)
			}
		default:
			if out.Action != v1alpha1.ActionUnlocked {
				t.Errorf("%s: %s (%s)", l.Name, out.Action, out.Message)
			}
			want := []string{"get leases/" + l.Name, "get pods/" + l.Host, "update leases/" + l.Name, "create events"}
			if !asked {
				// Who asks, once a run, before the first write.
				want, asked = slices.Insert(want, 2, "create selfsubjectreviews"), true
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: requests %q, want %q", l.Name, got, want)
			}
		}
	}
	if avg := float64(total) / float64(len(stale)); avg > 4.5 {
		t.Errorf("%.2f requests a lock, want at most 4.5", avg)
	}
	for _, r := range refs {
		l := get(t, srv, leaseName(r))
		switch r {
		case back:
			if l.Spec.HolderIdentity == nil || l.Annotations[inspect.AnnotationLock] == "" {
				t.Errorf("%s: a live holder's lock was cleared", r.Name)
			}
		case taken:
			if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != aliceID {
				t.Errorf("%s: the new holder's lock was not kept", r.Name)
			}
		default:
			if l.Spec.HolderIdentity != nil {
				t.Errorf("%s: still held by %q", r.Name, *l.Spec.HolderIdentity)
			}
		}
	}
	if n := len(events(t, srv)); n != len(refs)-2 {
		t.Errorf("%d Events, want %d", n, len(refs)-2)
	}
}

// With --all-stale too, a Lease changed between the read again and the
// write is a real 409 Conflict: the write carries the resourceVersion the
// Refresh read, not the snapshot's.
func TestUnlockInRaceIsAConflict(t *testing.T) {
	objs, _ := allStale(2)
	srv := serve(t, objs...)
	u := unlocker(t, srv)
	snap, stale := readAll(t, u)
	l := stale[0]
	other := "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
	u.BeforeWrite = func(ctx context.Context) error {
		cur := get(t, srv, l.Name).DeepCopy()
		cur.Spec.HolderIdentity = &other
		return srv.Tracker().Update(leasesGVR, cur, "default")
	}
	// The snapshot is older than the Lease: the Refresh reads it again.
	touched := get(t, srv, l.Name).DeepCopy()
	touched.Annotations["touched"] = "yes"
	if err := srv.Tracker().Update(leasesGVR, touched, "default"); err != nil {
		t.Fatal(err)
	}
	read := get(t, srv, l.Name).ResourceVersion
	srv.ResetRequests()
	out, err := u.UnlockIn(context.Background(), snap, l.Namespace, l.Name, Options{Confirm: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.Action != v1alpha1.Conflict {
		t.Fatalf("%s: %s", out.Action, out.Message)
	}
	if sent := leaseUpdates(t, srv); len(sent) != 1 || sent[0].ResourceVersion != read || read == l.ResourceVersion {
		t.Errorf("updates %+v, want one at %s (the snapshot read %s)", sent, read, l.ResourceVersion)
	}
	if h := get(t, srv, l.Name).Spec.HolderIdentity; h == nil || *h != other {
		t.Errorf("the new lock was not kept: %v", h)
	}
}

func TestTruncateKeepsRunes(t *testing.T) {
	if got := truncate("ab€", 4); got != "ab" {
		t.Errorf("truncate = %q", got)
	}
}

// --all-stale clears only the lock its listing decided on: another holder
// that took the lock since, even one whose runner is gone too (Stale as
// well), is refused after the re-read, without a write.
func TestUnlockInRefusesALockTakenSinceTheListing(t *testing.T) {
	id := lockID
	srv := serve(t, leaseOf(demo, &id, "root@"+holderPod(demo)), captfObject(demo))
	u := unlocker(t, srv)
	snap, stale := readAll(t, u)
	l := stale[0]
	// Another runner of demo took the lock and was killed in turn.
	taken := get(t, srv, l.Name).DeepCopy()
	other := "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
	taken.Spec.HolderIdentity = &other
	taken.Annotations[inspect.AnnotationLock] = `{"ID":"` + other + `","Operation":"OperationTypeApply","Who":"root@captf-c-demo-apply-a2-d72d2a-x7k2p","Version":"1.11.4","Created":"2026-12-01T00:00:00Z"}`
	if err := srv.Tracker().Update(leasesGVR, taken, "default"); err != nil {
		t.Fatal(err)
	}
	srv.ResetRequests()
	out, err := u.UnlockIn(context.Background(), snap, l.Namespace, l.Name, Options{Confirm: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.Action != v1alpha1.Refused || !strings.Contains(out.Message, "changed since it was listed") || out.Result.Decision.Verdict != v1alpha1.Stale {
		t.Fatalf("%s (%s): %s", out.Action, out.Result.Decision.Verdict, out.Message)
	}
	if w := writes(srv.Requests()); len(w) != 0 {
		t.Errorf("writes %v", w)
	}
	if h := get(t, srv, l.Name).Spec.HolderIdentity; h == nil || *h != other {
		t.Errorf("the new lock was not kept: %v", h)
	}
}

// A lock released since the listing (CAPTF's next Job force-unlocked it,
// say) is already unlocked, not refused as changed.
func TestUnlockInALockReleasedSinceTheListing(t *testing.T) {
	id := lockID
	srv := serve(t, leaseOf(demo, &id, "root@"+holderPod(demo)), captfObject(demo))
	u := unlocker(t, srv)
	snap, stale := readAll(t, u)
	l := stale[0]
	free := get(t, srv, l.Name).DeepCopy()
	free.Spec.HolderIdentity = nil
	delete(free.Annotations, inspect.AnnotationLock)
	if err := srv.Tracker().Update(leasesGVR, free, "default"); err != nil {
		t.Fatal(err)
	}
	srv.ResetRequests()
	out, err := u.UnlockIn(context.Background(), snap, l.Namespace, l.Name, Options{Confirm: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.Action != v1alpha1.AlreadyUnlocked {
		t.Fatalf("%s: %s", out.Action, out.Message)
	}
	if w := writes(srv.Requests()); len(w) != 0 {
		t.Errorf("writes %v", w)
	}
}
