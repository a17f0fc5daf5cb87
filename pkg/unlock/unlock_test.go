package unlock

import (
	"context"
	"fmt"
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

func run(t *testing.T, u *Unlocker, o Options) *Outcome {
	t.Helper()
	out, err := u.Unlock(context.Background(), "default", name, o)
	if err != nil {
		t.Fatal(err)
	}
	return out
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
	if ev.Reason != EventReason || ev.Type != "Warning" || ev.Regarding.Kind != "TerraformCluster" || ev.Regarding.Name != "demo" ||
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

func TestGuards(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	empty := ""
	cases := []struct {
		name   string
		lease  *coordinationv1.Lease
		pod    *corev1.Pod
		guard  Guard
		action v1alpha1.Action
		msg    string
	}{
		{"free", lease(nil, ""), nil, Guard{}, v1alpha1.AlreadyUnlocked, "already free"},
		{"stale", lease(&lockID, "root@"+demoPod), pod(corev1.PodFailed), Guard{}, v1alpha1.ActionUnlocked, "stale"},
		{"stale, wrong id", lease(&lockID, "root@"+demoPod), nil, Guard{ID: "nope", IDGiven: true}, v1alpha1.Refused, `is not the current one ("` + lockID},
		{"live", lease(&lockID, "root@"+demoPod), pod(corev1.PodRunning), Guard{}, v1alpha1.Refused, "holder pod " + demoPod + " is Running: clearing its lock lets two runs write the same state"},
		{"live, right id is not enough", lease(&lockID, "root@"+demoPod), pod(corev1.PodRunning), Guard{ID: lockID, IDGiven: true}, v1alpha1.Refused, "--force"},
		{"live, forced without the id", lease(&lockID, "root@"+demoPod), pod(corev1.PodPending), Guard{Force: true}, v1alpha1.Refused, "--force needs --id with the current lock ID"},
		{"live, forced with the id", lease(&lockID, "root@"+demoPod), pod(corev1.PodPending), Guard{Force: true, ID: lockID, IDGiven: true}, v1alpha1.ActionUnlocked, "--force with the current lock ID"},
		{"live, forced with a replaced holder's id", lease(&lockID, "root@"+demoPod), pod(corev1.PodRunning), Guard{Force: true, ID: "the-old-one", IDGiven: true}, v1alpha1.Refused, `the lock is now held by "root@` + demoPod},
		{"foreign", lease(&lockID, "alice@laptop"), nil, Guard{}, v1alpha1.Refused, "A foreign lock may be mid-write"},
		{"foreign, forced is not enough", lease(&lockID, "alice@laptop"), nil, Guard{Force: true}, v1alpha1.Refused, "run the last command below: it names the current lock ID with --id"},
		{"foreign, wrong id", lease(&lockID, "alice@laptop"), nil, Guard{ID: "x", IDGiven: true}, v1alpha1.Refused, `held by "alice@laptop" (OperationTypeApply, for 120m`},
		{"foreign, right id", lease(&lockID, "alice@laptop"), nil, Guard{ID: lockID, IDGiven: true}, v1alpha1.ActionUnlocked, "--id matches"},
		{"unknown, right id", lease(&lockID, ""), nil, Guard{ID: lockID, IDGiven: true}, v1alpha1.ActionUnlocked, "--id matches"},
		{"unknown", lease(&lockID, ""), nil, Guard{}, v1alpha1.Refused, "the lock is Unknown"},
		// holderIdentity "": the ID to name is the lock info's.
		{"empty holder", lease(&empty, ""), nil, Guard{ID: "", IDGiven: true}, v1alpha1.ActionUnlocked, "--id matches"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs := []runtime.Object{c.lease}
			if c.pod != nil {
				objs = append(objs, c.pod)
			}
			u, _ := setup(objs...)
			u.Now = func() time.Time { return now }
			out := run(t, u, Options{Guard: c.guard})
			if out.Action != c.action && !(c.action == v1alpha1.ActionUnlocked && out.Action == v1alpha1.WouldUnlock) {
				t.Errorf("action %s, want %s (%s)", out.Action, c.action, out.Message)
			}
			if !strings.Contains(out.Message, c.msg) {
				t.Errorf("message %q lacks %q", out.Message, c.msg)
			}
			// Every refusal says what to run next: the unlock with the
			// current ID, or (the ID no longer matches) a fresh look.
			if out.Action == v1alpha1.Refused {
				last := out.Commands[len(out.Commands)-1].String()
				if !strings.HasSuffix(last, "--id "+lockID+" --confirm") && !strings.HasPrefix(last, "kubectl captf explain ") {
					t.Errorf("last command %q", last)
				}
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
