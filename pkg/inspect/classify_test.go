package inspect

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

var (
	demo    = object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "demo"}
	demoPod = "captf-c-demo-apply-a1-d72d2a-x7k2p"
	web     = object.Ref{Kind: object.TerraformMachine, Namespace: "team-a", Name: "web"}
	web1Pod = "captf-m-web-1-apply-a1-d72d2a-x7k2p"
)

func ptr[T any](v T) *T { return &v }

func want(t *testing.T, r Result, v v1alpha1.Verdict, reason ...string) {
	t.Helper()
	if r.Decision.Verdict != v {
		t.Fatalf("verdict %s (%s), want %s", r.Decision.Verdict, r.Decision.Reason, v)
	}
	for _, s := range reason {
		if !strings.Contains(r.Decision.Reason, s) {
			t.Errorf("reason %q lacks %q", r.Decision.Reason, s)
		}
	}
}

func TestUnlocked(t *testing.T) {
	r := newCluster([]runtime.Object{lease(demo, nil, nil)}, demo).only(t)
	want(t, r, v1alpha1.Unlocked, "no holder")
	if l := r.Lock(); l.Lock != nil || l.Holder != nil || l.Object == nil || l.Object.Name != "demo" {
		t.Errorf("unlocked lock rendered as %+v", l)
	}
}

func TestLiveOwnPod(t *testing.T) {
	for _, phase := range []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodUnknown} {
		r := newCluster([]runtime.Object{held(demo, "root@"+demoPod), pod("default", demoPod, phase, true)}, demo).only(t)
		want(t, r, v1alpha1.Live, "holder pod "+demoPod+" is "+string(phase))
		if h := r.Lock().Holder; h == nil || !h.OwnPod || !h.PodExists || h.PodPhase != string(phase) {
			t.Errorf("%s: holder %+v", phase, h)
		}
	}
}

// A terminating pod may still be running the runtime in its grace period.
func TestLiveTerminatingPod(t *testing.T) {
	p := pod("default", demoPod, corev1.PodRunning, true)
	p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	r := newCluster([]runtime.Object{held(demo, "root@"+demoPod), p}, demo).only(t)
	want(t, r, v1alpha1.Live, "terminating")
	if h := r.Lock().Holder; !h.Terminating {
		t.Errorf("holder %+v not terminating", h)
	}
}

func TestStaleOwnPod(t *testing.T) {
	for _, phase := range []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed} {
		r := newCluster([]runtime.Object{held(demo, "root@"+demoPod), pod("default", demoPod, phase, true)}, demo).only(t)
		want(t, r, v1alpha1.Stale, "holder pod "+demoPod+" is "+string(phase), "next Job")
		if !r.Decision.CAPTFClears {
			t.Errorf("%s: CAPTF should clear it", phase)
		}
	}
	r := newCluster([]runtime.Object{held(demo, "root@"+demoPod)}, demo).only(t)
	want(t, r, v1alpha1.Stale, "no longer exists", "next Job")
	if h := r.Lock().Holder; h.PodExists || h.Pod != demoPod || !h.OwnPod {
		t.Errorf("holder %+v", h)
	}
}

// A pod that lost CAPTF's labels still holds the lock alive (the
// reading layer reads it by name: pkg/inspect/cluster's tests).
func TestUnlabelledLivePod(t *testing.T) {
	c := newCluster([]runtime.Object{held(demo, "root@"+demoPod), pod("default", demoPod, corev1.PodRunning, false)}, demo)
	want(t, c.only(t), v1alpha1.Live)
}

func TestStaleButNeverCleared(t *testing.T) {
	// The object was deleted: found through the Lease's owner labels.
	l := held(demo, "root@"+demoPod)
	l.Labels[LabelOwnerKind], l.Labels[LabelOwnerName] = "TerraformCluster", "demo"
	r := newCluster([]runtime.Object{l}).only(t)
	want(t, r, v1alpha1.Stale, "terraformcluster/demo no longer exists", "no controller")
	if r.Decision.CAPTFClears || r.Facts.Owner.Via != "lease labels" {
		t.Errorf("clears=%v via %q", r.Decision.CAPTFClears, r.Facts.Owner.Via)
	}
	if o := r.Lock().Object; o == nil || o.Exists == nil || *o.Exists {
		t.Errorf("object %+v should be known not to exist", o)
	}

	// The info ID differs from holderIdentity.
	info := lockInfo("aaaaaaaa-0000-0000-0000-000000000000", "root@"+demoPod)
	r = newCluster([]runtime.Object{lease(demo, ptr(lockID), &info)}, demo).only(t)
	want(t, r, v1alpha1.Stale, "differs from holderIdentity", "never clears")
	if r.Decision.CAPTFClears {
		t.Error("a mismatched ID never clears")
	}
	if l := r.Lock().Lock; l.ID != lockID || l.InfoID != "aaaaaaaa-0000-0000-0000-000000000000" {
		t.Errorf("lock %+v: ID must be holderIdentity, infoID beside it", l)
	}
}

// Without CAPTF's CRDs, the holder pod's unhashed name still identifies
// the object, which then does not exist.
func TestNoCRDsOwnerFromPodName(t *testing.T) {
	c := newCluster([]runtime.Object{held(demo, "root@"+demoPod)})
	c.notServed = true
	r := c.only(t)
	want(t, r, v1alpha1.Stale, "no longer exists")
	if r.Facts.Owner == nil || r.Facts.Owner.Via != "holder pod name" {
		t.Fatalf("owner %+v", r.Facts.Owner)
	}
	// A workstation lock there: no object can be identified.
	c = newCluster([]runtime.Object{held(demo, "alice@laptop")})
	c.notServed = true
	want(t, c.only(t), v1alpha1.Foreign, "no CAPTF object owns suffix "+demo.Suffix(), "serves none")
}

func TestForeign(t *testing.T) {
	r := newCluster([]runtime.Object{held(demo, "alice@laptop")}, demo).only(t)
	want(t, r, v1alpha1.Foreign, "holder host laptop is not a runner pod of terraformcluster/demo")
	if h := r.Lock().Holder; h.OwnPod || h.Pod != "" {
		t.Errorf("holder %+v", h)
	}

	// Another object's runner pod (web-1's, on web's lock), which exists.
	web1 := object.Ref{Kind: object.TerraformMachine, Namespace: "team-a", Name: "web-1"}
	r = newCluster([]runtime.Object{held(web, "root@"+web1Pod), pod("team-a", web1Pod, corev1.PodRunning, true)}, web, web1).only(t)
	want(t, r, v1alpha1.Foreign, "not a runner pod of terraformmachine/web", "(that pod exists, Running)")
	if h := r.Lock().Holder; h.Pod != web1Pod || h.PodPhase != "Running" || h.OwnPod {
		t.Errorf("holder %+v", h)
	}

	// A lock no object owns.
	orphan := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "gone"}
	r = newCluster([]runtime.Object{held(orphan, "alice@laptop")}, demo).only(t)
	want(t, r, v1alpha1.Foreign, "no CAPTF object owns suffix "+orphan.Suffix())
	if r.Lock().Object != nil {
		t.Error("no object expected")
	}
}

func TestUnknown(t *testing.T) {
	cases := map[string]struct {
		holder *string
		info   *string
		reason string
	}{
		"empty holderIdentity": {ptr(""), ptr(lockInfo("", "root@"+demoPod)), `holderIdentity is ""`},
		"no annotation":        {ptr(lockID), nil, "no app.terraform.io/lock-info annotation"},
		"not JSON":             {ptr(lockID), ptr("{not json"), "does not parse"},
		"Created not RFC 3339": {ptr(lockID), ptr(`{"ID":"x","Who":"root@` + demoPod + `","Created":"2026-09-26 15:53:38"}`), "does not parse"},
		"ID wrongly typed":     {ptr(lockID), ptr(`{"ID":5,"Who":"root@` + demoPod + `"}`), "does not parse"},
		"Who without @":        {ptr(lockID), ptr(lockInfo(lockID, demoPod)), `has no "@"`},
		"empty host":           {ptr(lockID), ptr(lockInfo(lockID, "root@")), "names no host"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := newCluster([]runtime.Object{lease(demo, c.holder, c.info), pod("default", demoPod, corev1.PodFailed, true)}, demo).only(t)
			want(t, r, v1alpha1.Unknown, c.reason)
			if r.Decision.CAPTFClears {
				t.Error("CAPTF never clears an Unknown lock")
			}
		})
	}
}

// The controller decodes only ID, Operation, Who, Version and Created, with
// Go's case-insensitive key matching.
func TestLockInfoParsesAsTheController(t *testing.T) {
	info := `{"id":"` + lockID + `","who":"ops@bastion@` + demoPod + `","created":"2026-09-26T15:53:38Z","Info":5,"Path":[]}`
	r := newCluster([]runtime.Object{lease(demo, ptr(lockID), &info)}, demo).only(t)
	want(t, r, v1alpha1.Stale)
	if r.Facts.Lease.Host != demoPod {
		t.Errorf("host %q: Who splits at its last @", r.Facts.Lease.Host)
	}
}

func TestActiveJobIsShownNotDecisive(t *testing.T) {
	j := job("default", "captf-c-demo-apply-a2-aaaaaa", demo, false)
	done := job("default", "captf-c-demo-apply-a1-d72d2a", demo, true)
	r := newCluster([]runtime.Object{held(demo, "root@"+demoPod), j, done}, demo).only(t)
	want(t, r, v1alpha1.Stale)
	if r.ActiveJob == nil || r.ActiveJob.Name != j.Name || r.ActiveJob.Operation != "apply" || r.ActiveJob.Attempt != 2 {
		t.Errorf("active job %+v", r.ActiveJob)
	}
}

// CAPTF's active Job is the newest unfinished one by creationTimestamp,
// found by its owner labels; a Job with only an owner reference is not.
func TestActiveJobIsTheNewestByOwnerLabels(t *testing.T) {
	older := job("default", "captf-c-demo-refresh-a1-aaaaaa", demo, false)
	older.CreationTimestamp = metav1.NewTime(created)
	newer := job("default", "captf-c-demo-apply-a3-bbbbbb", demo, false)
	newer.CreationTimestamp = metav1.NewTime(created.Add(time.Minute))
	unlabelled := job("default", "captf-c-demo-apply-a9-cccccc", demo, false)
	unlabelled.Labels = map[string]string{LabelManaged: "true"}
	unlabelled.CreationTimestamp = metav1.NewTime(created.Add(time.Hour))
	r := newCluster([]runtime.Object{held(demo, "root@"+demoPod), newer, older, unlabelled}, demo).only(t)
	if r.ActiveJob == nil || r.ActiveJob.Name != newer.Name || r.ActiveJob.Attempt != 3 || !r.ActiveJob.StartTime.Equal(newer.CreationTimestamp.Time) {
		t.Errorf("active job %+v, want %s", r.ActiveJob, newer.Name)
	}
}

// The Lease's name is the authority: labels that carry another object's
// suffix are a warning, never followed (CAPTF's state.LeaseName).
func TestLabelsNeverOverrideTheName(t *testing.T) {
	webC := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "web"}
	l := held(webC, "root@"+demoPod) // named as web's lock, held by demo's pod
	l.Labels[LabelSecretSuffix] = demo.Suffix()
	l.Labels[LabelOwnerKind], l.Labels[LabelOwnerName] = "TerraformCluster", "demo"
	r := newCluster([]runtime.Object{l}, demo, webC).only(t)
	want(t, r, v1alpha1.Foreign, "not a runner pod of terraformcluster/web", "warning: label tfstateSecretSuffix="+demo.Suffix(), "owner labels name TerraformCluster demo")
	if r.Facts.Owner == nil || r.Facts.Owner.Ref != webC || r.Facts.Lease.Suffix != webC.Suffix() {
		t.Errorf("owner %+v suffix %s, want web's", r.Facts.Owner, r.Facts.Lease.Suffix)
	}
	if w := r.Lock().Warnings; len(w) != 2 {
		t.Errorf("warnings %q", w)
	}
}

// A name taken from holder text is trusted as an owner only when it can be
// a Kubernetes object's name.
func TestHolderNamedOwnerMustBeAValidName(t *testing.T) {
	evil := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "x\x1b]0;x\x07$(id)"}
	host := "captf-c-" + evil.Name + "-apply-a1-d72d2a-x7k2p"
	r := newCluster([]runtime.Object{held(evil, "root@"+host)}).only(t)
	want(t, r, v1alpha1.Foreign, "not a valid Kubernetes object name")
	if r.Facts.Owner != nil || strings.Contains(r.Decision.Reason, "\x1b") {
		t.Errorf("owner %+v, reason %q", r.Facts.Owner, r.Decision.Reason)
	}
}

func TestOtherWorkspaceIsReadByNoController(t *testing.T) {
	l := held(demo, "root@"+demoPod)
	l.Name = object.LockLeaseName("staging", demo.Suffix())
	l.Labels[LabelWorkspace] = "staging"
	rep := newCluster([]runtime.Object{l}, demo).inspect(t, Scope{AllWorkspaces: true})
	want(t, rep.Results[0], v1alpha1.Foreign, `workspace "staging"`, "no controller reads this lock")
	if rep.Results[0].Decision.CAPTFClears {
		t.Error("CAPTF clears a lock of a workspace it never reads")
	}
}

// A stale lock clears only through a Job CAPTF starts; every gate that
// keeps Jobs from starting keeps the lock.
func TestGatesDecideWhetherCAPTFClears(t *testing.T) {
	now := metav1.NewTime(created)
	cond := func(typ, status, reason string) map[string]any {
		return map[string]any{"conditions": []any{map[string]any{"type": typ, "status": status, "reason": reason, "message": "m", "lastTransitionTime": "2026-09-26T15:53:38Z"}}}
	}
	for _, c := range []struct {
		name   string
		edit   func(u *unstructured.Unstructured)
		clears bool
		reason string
	}{
		{"open", func(*unstructured.Unstructured) {}, true, "CAPTF clears it with the object's next Job"},
		{"paused annotation", func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"cluster.x-k8s.io/paused": ""}) }, false, "paused"},
		{"paused cluster", func(u *unstructured.Unstructured) { u.Object["status"] = cond("Paused", "True", "Paused") }, false, "condition Paused"},
		{"retain deletion", func(u *unstructured.Unstructured) {
			u.SetDeletionTimestamp(&now)
			u.SetFinalizers([]string{"x"})
			_ = unstructured.SetNestedField(u.Object, "Retain", "spec", "deletionPolicy")
		}, false, "deletionPolicy Retain"},
		// The destroy renders an inputs record and needs a namespace that
		// is not being deleted: not read here, so "if a Job starts".
		{"destroy deletion", func(u *unstructured.Unstructured) {
			u.SetDeletionTimestamp(&now)
			_ = unstructured.SetNestedField(u.Object, "Destroy", "spec", "deletionPolicy")
		}, false, "if a Job starts"},
		{"identity", func(u *unstructured.Unstructured) {
			u.Object["status"] = cond("IdentityAllowed", "False", "IdentityNotFound")
		}, false, "credentials are not ready"},
		{"approval", func(u *unstructured.Unstructured) {
			u.Object["status"] = cond("ApplyJobSucceeded", "Unknown", "PlanAwaitingApproval")
		}, false, "if a Job starts"},
		{"state held", func(u *unstructured.Unstructured) {
			u.Object["status"] = cond("StateReadable", "False", "StateCorrupt")
		}, false, "holds the state"},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := full(demo, nil)
			c.edit(u)
			r := newClusterFull([]runtime.Object{held(demo, "root@"+demoPod), stateSecret(demo)}, u).only(t)
			want(t, r, v1alpha1.Stale, c.reason)
			if r.Decision.CAPTFClears != c.clears {
				t.Errorf("captfClears %v, want %v (%s)", r.Decision.CAPTFClears, c.clears, r.Decision.Reason)
			}
		})
	}
}

func TestStaleIDMismatchExplainsTheAlert(t *testing.T) {
	id, info := "other-id", lockInfo(lockID, "root@"+demoPod)
	r := newCluster([]runtime.Object{lease(demo, &id, &info)}, demo).only(t)
	want(t, r, v1alpha1.Stale, "never clears by itself", "ForceUnlocked", "captf_lock_force_unlocks_total", "CAPTFForceUnlocks")
	if r.Decision.CAPTFClears {
		t.Error("an ID mismatch clears")
	}
}

// A holder host that cannot be a pod name is gone without asking, and
// the reason says why.
func TestInvalidPodNameHolder(t *testing.T) {
	host := "captf-c-demo-apply-a1-d72d2a-X_Y_Z"
	r := newCluster([]runtime.Object{held(demo, "root@"+host)}, demo).only(t)
	want(t, r, v1alpha1.Stale, "cannot exist: its name is not a valid pod name")
}

// A 1 MiB lock info (the API server caps annotations at 256 KiB, so only
// a fake carries one) parses like any other.
func TestHugeLockInfo(t *testing.T) {
	info := `{"ID":"` + lockID + `","Who":"root@` + demoPod + `","Info":"` + strings.Repeat("x", 1<<20) + `"}`
	r := newCluster([]runtime.Object{lease(demo, ptr(lockID), &info)}, demo).only(t)
	want(t, r, v1alpha1.Stale, "no longer exists")
}

// Classify names the case that decides whether a Stale lock clears, so
// that whoever says what CAPTF does next reads it rather than deciding it
// again; every other verdict is NotStale.
func TestStaleCase(t *testing.T) {
	staleHeld := []runtime.Object{held(demo, "root@"+demoPod)}
	gated := func(edit func(u *unstructured.Unstructured)) *cluster {
		u := full(demo, nil)
		edit(u)
		return newClusterFull(staleHeld, u)
	}
	for _, c := range []struct {
		name    string
		cluster func() *cluster
		want    StaleCase
		verdict v1alpha1.Verdict
	}{
		{"open gate", func() *cluster { return newCluster(staleHeld, demo) }, StaleClears, v1alpha1.Stale},
		{"lock-info ID differs", func() *cluster {
			return newCluster([]runtime.Object{lease(demo, ptr("other-id"), ptr(lockInfo(lockID, "root@"+demoPod)))}, demo)
		}, StaleIDMismatch, v1alpha1.Stale},
		{"object list forbidden", func() *cluster {
			c := newCluster(staleHeld, demo)
			c.kindErr = map[string]error{demo.Kind.Name: errors.New("terraformclusters is forbidden")}
			return c
		}, StaleOwnerUnread, v1alpha1.Stale},
		{"object gone", func() *cluster {
			l := held(demo, "root@"+demoPod)
			l.Labels[LabelOwnerKind], l.Labels[LabelOwnerName] = "TerraformCluster", "demo"
			return newCluster([]runtime.Object{l})
		}, StaleOwnerGone, v1alpha1.Stale},
		{"object listed but not read in full", func() *cluster {
			c := newCluster(staleHeld, demo)
			c.gatesUnread = true
			return c
		}, StaleGatesUnread, v1alpha1.Stale},
		{"paused", func() *cluster {
			return gated(func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"cluster.x-k8s.io/paused": ""}) })
		}, StaleGateClosed, v1alpha1.Stale},
		{"drift interval 0", func() *cluster {
			return gated(func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, int64(0), "spec", "drift", "intervalSeconds")
			})
		}, StaleGateUnsure, v1alpha1.Stale},
		{"live", func() *cluster {
			return newCluster(append(staleHeld, pod("default", demoPod, corev1.PodRunning, true)), demo)
		}, NotStale, v1alpha1.Live},
		{"foreign", func() *cluster { return newCluster([]runtime.Object{held(demo, "alice@laptop")}, demo) }, NotStale, v1alpha1.Foreign},
		{"unknown", func() *cluster { return newCluster([]runtime.Object{lease(demo, ptr(lockID), nil)}, demo) }, NotStale, v1alpha1.Unknown},
		{"unlocked", func() *cluster { return newCluster([]runtime.Object{lease(demo, nil, nil)}, demo) }, NotStale, v1alpha1.Unlocked},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.cluster().only(t)
			d := r.Decision
			if d.Verdict != c.verdict || d.StaleCase != c.want {
				t.Fatalf("%s/%v, want %s/%v (%s)", d.Verdict, d.StaleCase, c.verdict, c.want, d.Reason)
			}
			if d.CAPTFClears != (d.StaleCase == StaleClears) {
				t.Errorf("captfClears %v disagrees with case %v", d.CAPTFClears, d.StaleCase)
			}
		})
	}
	if s := StaleCase(99).String(); s != "StaleCase(99)" {
		t.Errorf("out-of-range case prints %q", s)
	}
}

// Classify on facts alone: a holder name client-go refuses fails CAPTF's
// lock check, but the reason says when the preamble may stop first (the
// gates unread, or an ownerless deletion CAPTF may release there).
func TestRefusedNameAndThePreamble(t *testing.T) {
	host := "captf-c-demo-apply-a1-d72d2a-ab/cd"
	id, info := lockID, lockInfo(lockID, "root@"+host)
	yes := true
	facts := func(g *jobgate.Gate) Facts {
		return Facts{Lease: ParseLease(lease(demo, &id, &info)), Owner: &Owner{Ref: demo, Exists: &yes, Via: "object"}, Gate: g}
	}
	for _, c := range []struct {
		name string
		gate *jobgate.Gate
		want StaleCase
		says string
	}{
		{"gates unread", nil, StaleCheckFails, "whether CAPTF's preamble stops before that check could not be read"},
		{"an ownerless deletion CAPTF may release", &jobgate.Gate{State: jobgate.Unsure, Reason: "it has no Cluster owner reference and …", MaybeBeforeLockCheck: true}, StaleCheckFails, "unless CAPTF's preamble releases the object first: it has no Cluster owner reference"},
		{"released in the preamble", &jobgate.Gate{State: jobgate.Closed, Reason: "released", BeforeLockCheck: true, Quiet: true, Releases: true}, StaleGateClosed, "CAPTF's reconcile stops before its lock check"},
	} {
		d := Classify(facts(c.gate))
		if d.Verdict != v1alpha1.Stale || d.StaleCase != c.want || d.CAPTFClears || !strings.Contains(d.Reason, c.says) {
			t.Errorf("%s: %s %v %q", c.name, d.Verdict, d.StaleCase, d.Reason)
		}
	}
}

// Classify names a case for every verdict, which explain and the advice
// read instead of deciding again; it follows CAPTF's order: the
// workspace, the ID, then the owner.
func TestCaseOfEveryVerdict(t *testing.T) {
	other := held(demo, "alice@laptop")
	other.Name, other.Labels[LabelWorkspace] = object.LockLeaseName("staging", demo.Suffix()), "staging"
	gone := held(demo, "alice@laptop")
	gone.Labels[LabelOwnerKind], gone.Labels[LabelOwnerName] = "TerraformCluster", "demo"
	labelled := held(demo, "alice@laptop")
	labelled.Labels[LabelOwnerKind], labelled.Labels[LabelOwnerName] = "TerraformCluster", "demo"
	unread := newCluster([]runtime.Object{labelled}, demo)
	unread.kindErr = map[string]error{demo.Kind.Name: errors.New("terraformclusters is forbidden")}
	orphan := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "orphan"}
	for _, c := range []struct {
		name    string
		cluster *cluster
		scope   Scope
		verdict v1alpha1.Verdict
		want    Case
	}{
		{"free", newCluster([]runtime.Object{lease(demo, nil, nil)}, demo), Scope{}, v1alpha1.Unlocked, CaseFree},
		{"own runner", newCluster([]runtime.Object{held(demo, "root@"+demoPod), pod("default", demoPod, corev1.PodRunning, true)}, demo), Scope{}, v1alpha1.Live, CaseOwnRunner},
		{"stale", newCluster([]runtime.Object{held(demo, "root@"+demoPod)}, demo), Scope{}, v1alpha1.Stale, CaseStale},
		{"other workspace", newCluster([]runtime.Object{other}, demo), Scope{AllWorkspaces: true}, v1alpha1.Foreign, CaseOtherWorkspace},
		{"empty ID", newCluster([]runtime.Object{lease(demo, ptr(""), ptr(lockInfo("", "root@"+demoPod)))}, demo), Scope{}, v1alpha1.Unknown, CaseEmptyID},
		{"no owner", newCluster([]runtime.Object{held(orphan, "alice@laptop")}, demo), Scope{}, v1alpha1.Foreign, CaseNoOwner},
		{"owner unread", unread, Scope{}, v1alpha1.Foreign, CaseOwnerUnread},
		{"owner gone", newCluster([]runtime.Object{gone}), Scope{}, v1alpha1.Foreign, CaseOwnerGone},
		{"another's holder", newCluster([]runtime.Object{held(demo, "alice@laptop")}, demo), Scope{}, v1alpha1.Foreign, CaseStateLocked},
		{"unreadable lock info", newCluster([]runtime.Object{lease(demo, ptr(lockID), ptr("{not json"))}, demo), Scope{}, v1alpha1.Unknown, CaseStateLocked},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := c.cluster.inspect(t, c.scope)
			if len(rep.Results) != 1 {
				t.Fatalf("%d results", len(rep.Results))
			}
			d := rep.Results[0].Decision
			if d.Verdict != c.verdict || d.Case != c.want {
				t.Errorf("%s/%s, want %s/%s (%s)", d.Verdict, d.Case, c.verdict, c.want, d.Reason)
			}
			if (d.Case == CaseStale) != (d.StaleCase != NotStale) {
				t.Errorf("case %s with stale case %s", d.Case, d.StaleCase)
			}
		})
	}
	if s := Case(99).String(); s != "Case(99)" {
		t.Errorf("out-of-range case prints %q", s)
	}
}
