package cluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// A watch decides a changed lock from its informers' stores as Read
// decided it: every Lease of a cluster with every kind of lock (live,
// stale, held through an unlabelled pod, deleting machines with and
// without state) is touched, and not one is reported changed; and those
// re-checks list nothing again, reading live only the owners kept in
// full (once each), the unlabelled holder pods and the gates'
// surroundings.
func TestWatchDecidesFromItsStoresAsReadDoes(t *testing.T) {
	objs, _, _ := scaled(24)
	// The Stale locks' owners run Jobs: some running, some finished.
	for i := 1; i < 24; i += 4 {
		r := object.Ref{Kind: object.TerraformCluster, Namespace: fmt.Sprintf("ns%d", i%3), Name: fmt.Sprintf("c%d", i)}
		objs = append(objs, runnerJob(r, runnerJobName(r, 1), i%8 == 1))
	}
	srv, r := newReader(t, objs...)
	w := startWatch(t, r, inspect.Scope{})
	first := w.first(t)
	jobs := 0
	for _, res := range first.Results {
		if res.ActiveJobName() != "" {
			jobs++
		}
	}
	if len(first.Results) != 24 || jobs != 3 {
		t.Fatalf("%d locks in the first report, %d with an active Job; want 24 and 3", len(first.Results), jobs)
	}
	srv.ResetRequests()
	touch := func() {
		for _, o := range objs {
			l, ok := o.(*coordinationv1.Lease)
			if !ok {
				continue
			}
			l = l.DeepCopy()
			l.Labels["touched"] = l.ResourceVersion + "x"
			l.ResourceVersion = ""
			if err := srv.Tracker().Update(coordinationv1.SchemeGroupVersion.WithResource("leases"), l, l.Namespace); err != nil {
				t.Fatal(err)
			}
		}
	}
	touch()
	// A new lock, queued after every touched one: once it is reported,
	// they have all been re-checked.
	sentinel := object.Ref{Kind: object.TerraformCluster, Namespace: "ns0", Name: "sentinel"}
	if err := srv.Tracker().Create(coordinationv1.SchemeGroupVersion.WithResource("leases"), lockLease(sentinel, nil, nil), "ns0"); err != nil {
		t.Fatal(err)
	}
	if c := w.awaitOnly(t, "ns0", lockName(sentinel)); c.Deleted || c.Result.Decision.Verdict != v1alpha1.Unlocked {
		t.Errorf("sentinel: %s", c.Result.Decision.Verdict)
	}
	reqs := srv.Requests()
	for _, q := range reqs {
		// The lists of the gates' reads, and of the watches of the
		// unlabelled holder pods by name, which start after the first
		// report, are expected.
		podWatch := q.Resource == "pods" && strings.HasPrefix(q.Query.Get("fieldSelector"), "metadata.name=")
		if q.Verb == "list" && !podWatch && q.Resource != "secrets" && q.Resource != "clusters" && q.Resource != "terraformclusters" && q.Resource != "namespaces" {
			t.Errorf("a re-check listed %s again:%s", q.Resource, describe(reqs))
		}
		if q.Verb == "get" && (q.Resource == "leases" || q.Resource == "jobs") {
			t.Errorf("a re-check read %s %s live", q.Resource, q.Path)
		}
	}
	// Every lock is held or its owner deleting: each owner is read in
	// full, once (a re-check queued by an unlabelled pod's watch may have
	// read it before the touch).
	perOwner := map[string]int{}
	for _, q := range srv.Requests() {
		if isOwnerGet(q) {
			if perOwner[q.Path]++; perOwner[q.Path] > 1 {
				t.Errorf("%s read %d times", q.Path, perOwner[q.Path])
			}
		}
	}
	if len(perOwner) < 18 {
		t.Errorf("%d owners read in full, want 18 to 24:%s", len(perOwner), describe(reqs))
	}

	// Touched again, with no owner changed: no owner is read again.
	srv.ResetRequests()
	touch()
	if err := srv.Tracker().Delete(coordinationv1.SchemeGroupVersion.WithResource("leases"), "ns0", lockName(sentinel)); err != nil {
		t.Fatal(err)
	}
	if c := w.awaitOnly(t, "ns0", lockName(sentinel)); !c.Deleted {
		t.Errorf("the sentinel's deletion is reported as %s", c.Result.Decision.Verdict)
	}
	if n := ownerGets(srv); n != 0 {
		t.Errorf("%d owners read again though none changed:%s", n, describe(srv.Requests()))
	}
	// A labelled holder pod that fails is read from the store: Stale,
	// without a GET of it.
	srv.ResetRequests()
	r0 := object.Ref{Kind: object.TerraformCluster, Namespace: "ns0", Name: "c0"}
	failed := podOf("ns0", runnerPodName(r0), corev1.PodFailed, true)
	if err := srv.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), failed, "ns0"); err != nil {
		t.Fatal(err)
	}
	w.await(t, "ns0", lockName(r0), "c0's pod failed", verdictIs(v1alpha1.Stale, ""))
	// (The unlabelled holder pods are read by name: their single-pod
	// watches queue them once they have listed.)
	if n := countWhere(srv.Requests(), func(q fakeapi.Request) bool {
		return q.Verb == "get" && strings.HasSuffix(q.Path, "/pods/"+failed.Name)
	}); n != 0 {
		t.Errorf("the labelled pod was read by name %d times", n)
	}
}

// ownerGets counts the reads of owners by name: not those of the
// TerraformClusters the deleting machines inherit from (tccl*), which the
// gates' surroundings read.
func ownerGets(srv *fakeapi.Server) int { return countWhere(srv.Requests(), isOwnerGet) }

func isOwnerGet(q fakeapi.Request) bool {
	return q.Verb == "get" && (q.Resource == "terraformmachines" || q.Resource == "terraformclusters" && !strings.Contains(q.Path, "/tccl"))
}

// awaitOnly waits for the next change of the lock ns/name, failing on any
// change of another lock reported before it.
func (w *watching) awaitOnly(t *testing.T, ns, name string) inspect.Change {
	t.Helper()
	deadline := time.After(watchDeadline)
	for {
		select {
		case c := <-w.changes:
			l := c.Result.Facts.Lease
			if l.Namespace == ns && l.Name == name {
				return c
			}
			t.Errorf("%s/%s reported changed: deleted=%v %s (%s), active Job %q", l.Namespace, l.Name, c.Deleted, c.Result.Decision.Verdict, c.Result.Decision.Reason, c.Result.ActiveJobName())
		case err := <-w.done:
			t.Fatalf("Watch ended waiting for %s/%s: %v", ns, name, err)
		case <-deadline:
			t.Fatalf("no change of %s/%s reported", ns, name)
		}
	}
}

// The owner kept in full is read again once its resourceVersion moves: a
// change of its own gates is reported though its lock and pod did not
// change.
func TestWatchReadsTheOwnerAgainWhenItChanges(t *testing.T) {
	m, mu := machineOf("default", "web", "prod")
	if err := unstructured.SetNestedField(mu.Object, int64(0), "spec", "drift", "intervalSeconds"); err != nil {
		t.Fatal(err)
	}
	srv, r := newReader(t, heldLease(m, "root@"+runnerPodName(m)), mu)
	w := startWatch(t, r, inspect.Scope{})
	wantVerdict(t, resultOf(t, w.first(t), "default", lockName(m)), v1alpha1.Stale, "no Job is due")
	// A re-check first, which reads the owner in full and keeps it.
	l := heldLease(m, "root@"+runnerPodName(m))
	l.Labels["touched"] = "1"
	if err := srv.Tracker().Update(coordinationv1.SchemeGroupVersion.WithResource("leases"), l, "default"); err != nil {
		t.Fatal(err)
	}
	sentinel := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "sentinel"}
	if err := srv.Tracker().Create(coordinationv1.SchemeGroupVersion.WithResource("leases"), lockLease(sentinel, nil, nil), "default"); err != nil {
		t.Fatal(err)
	}
	w.awaitOnly(t, "default", lockName(sentinel))
	on := mu.DeepCopy()
	if err := unstructured.SetNestedField(on.Object, int64(600), "spec", "drift", "intervalSeconds"); err != nil {
		t.Fatal(err)
	}
	on.SetResourceVersion("")
	if err := srv.Tracker().Update(m.Kind.GVR(), on, "default"); err != nil {
		t.Fatal(err)
	}
	w.await(t, "default", lockName(m), "web's own drift turned on", verdictIs(v1alpha1.Stale, "a drift Job, every 600 s"))
}

// Two unfinished runner Jobs of one owner created in the same second: the
// watch picks the active one as a list does (by name), however often the
// lock is re-checked.
func TestWatchPicksTheActiveJobAsReadDoes(t *testing.T) {
	j1 := runnerJob(laptop, runnerJobName(laptop, 1), false)
	j2 := runnerJob(laptop, runnerJobName(laptop, 2), false)
	srv, r := newReader(t, heldLease(laptop, "alice@laptop"), captfObject(laptop, nil), j2, j1)
	w := startWatch(t, r, inspect.Scope{Namespace: "default"})
	if got := resultOf(t, w.first(t), "default", lockName(laptop)).ActiveJobName(); got != j1.Name {
		t.Fatalf("first report: active Job %q, want %q", got, j1.Name)
	}
	for i := range 20 {
		l := heldLease(laptop, "alice@laptop")
		l.Labels["touched"] = fmt.Sprint(i)
		if err := srv.Tracker().Update(coordinationv1.SchemeGroupVersion.WithResource("leases"), l, "default"); err != nil {
			t.Fatal(err)
		}
		// Each touch re-checked on its own, not merged with the next.
		sentinel := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: fmt.Sprintf("sentinel-%d", i)}
		if err := srv.Tracker().Create(coordinationv1.SchemeGroupVersion.WithResource("leases"), lockLease(sentinel, nil, nil), "default"); err != nil {
			t.Fatal(err)
		}
		w.awaitOnly(t, "default", lockName(sentinel))
	}
}

// CAPTF's CRDs removed during a watch: once the kinds' informers find
// them no longer served, every lock is read live, and shows what a fresh
// read shows.
func TestWatchReadsLiveOnceAKindIsGone(t *testing.T) {
	t.Parallel()
	srv, r, w, first := demoWatch(t, 300*time.Millisecond)
	wantVerdict(t, resultOf(t, first, "default", lockName(demo)), v1alpha1.Foreign)
	unserveKinds(srv)
	srv.EndWatches()
	c := w.await(t, "default", lockName(demo), "the kinds no longer served", func(c inspect.Change) bool { return !c.Deleted })
	_, fresh := readOne(t, r, "default", lockName(demo))
	if c.Result.Decision.Reason != fresh.Decision.Reason || c.Result.Decision.Verdict != fresh.Decision.Verdict ||
		!strings.Contains(fresh.Decision.Reason, "serves none of CAPTF's kinds") {
		t.Errorf("the watch shows %s (%s); a fresh read %s (%s)", c.Result.Decision.Verdict, c.Result.Decision.Reason, fresh.Decision.Verdict, fresh.Decision.Reason)
	}
}

// Leases no longer readable during a watch (RBAC revoked, credentials
// expired): the watch ends with that error rather than showing rows that
// no longer change.
func TestWatchEndsWhenItsLeasesCanNoLongerBeRead(t *testing.T) {
	t.Parallel()
	srv, r := newReader(t, heldLease(demo, "alice@laptop"), captfObject(demo, nil))
	r.failFor = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- r.Watch(ctx, inspect.Scope{Namespace: "default"},
			func(*inspect.Report) error { close(first); return nil },
			func(inspect.Change) error { return nil })
	}()
	select {
	case <-first:
	case err := <-done:
		t.Fatalf("the watch ended before its first report: %v", err)
	case <-time.After(watchDeadline):
		t.Fatal("no first report")
	}
	forbidden(srv, func(q fakeapi.Request) bool { return q.Resource == "leases" && (q.Verb == "list" || q.Verb == "watch") })
	srv.EndWatches()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "cannot list leases") || !strings.Contains(err.Error(), "forbidden") {
			t.Errorf("the watch ended with %v, want the refused list", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the watch still runs after its Leases were refused")
	}
}
