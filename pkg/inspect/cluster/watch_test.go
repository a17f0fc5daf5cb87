package cluster

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// watchDeadline is how long a change may take to be reported before the
// test fails: a failure timeout, never a measure of speed.
const watchDeadline = 10 * time.Second

// watching is a Watch running in the background.
type watching struct {
	initial chan *inspect.Report
	changes chan inspect.Change
	done    chan error
	cancel  context.CancelFunc
	// patience replaces watchDeadline in await: a test that ends the
	// informers' watches several times waits out client-go's growing
	// backoff before they reconnect.
	patience time.Duration
}

func startWatch(t *testing.T, r *Reader, s inspect.Scope) *watching {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watching{initial: make(chan *inspect.Report, 1), changes: make(chan inspect.Change, 64), done: make(chan error, 1), cancel: cancel}
	go func() {
		w.done <- r.Watch(ctx, s,
			func(rep *inspect.Report) error { w.initial <- rep; return nil },
			func(c inspect.Change) error {
				select {
				case w.changes <- c:
				case <-ctx.Done():
				}
				return nil
			})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-w.done:
			if err != nil {
				t.Errorf("Watch ended with %v", err)
			}
		case <-time.After(watchDeadline):
			t.Error("Watch did not end with its context")
		}
	})
	return w
}

// first is the first report.
func (w *watching) first(t *testing.T) *inspect.Report {
	t.Helper()
	select {
	case rep := <-w.initial:
		return rep
	case err := <-w.done:
		t.Fatalf("Watch ended before its first report: %v", err)
	case <-time.After(watchDeadline):
		t.Fatal("no first report")
	}
	return nil
}

// await waits for a change of the lock ns/name that ok accepts; changes
// it does not accept are kept for the failure message.
func (w *watching) await(t *testing.T, ns, name string, what string, ok func(inspect.Change) bool) inspect.Change {
	t.Helper()
	var seen []string
	deadline := time.After(cmp.Or(w.patience, watchDeadline))
	for {
		select {
		case c := <-w.changes:
			l := c.Result.Facts.Lease
			if l.Namespace == ns && l.Name == name && ok(c) {
				return c
			}
			seen = append(seen, fmt.Sprintf("%s/%s deleted=%v %s (%s) job %q", l.Namespace, l.Name, c.Deleted, c.Result.Decision.Verdict, c.Result.Decision.Reason, c.Result.ActiveJobName()))
		case err := <-w.done:
			t.Fatalf("Watch ended waiting for %s: %v", what, err)
		case <-deadline:
			t.Fatalf("no change reported for %s; seen:\n%s", what, strings.Join(seen, "\n"))
		}
	}
}

func verdictIs(v v1alpha1.Verdict, reason string) func(inspect.Change) bool {
	return func(c inspect.Change) bool {
		return !c.Deleted && c.Result.Decision.Verdict == v && strings.Contains(c.Result.Decision.Reason, reason)
	}
}

// A watch reports each lock whose verdict, reason or active Job changes,
// whichever input changed: its Lease, its holder's pod, its owner, or
// one of the owner's runner Jobs; and a lock whose Lease goes.
func TestWatchReportsEachInputsChange(t *testing.T) {
	demoPod := runnerPodName(demo)
	srv, r := newReader(t,
		heldLease(demo, "root@"+demoPod), captfObject(demo, nil), podOf("default", demoPod, corev1.PodRunning, true),
		heldLease(lost, "root@"+runnerPodName(lost)), captfObject(lost, nil),
		lockLease(idle, nil, nil), captfObject(idle, nil),
		heldLease(laptop, "alice@laptop"), captfObject(laptop, nil),
	)
	w := startWatch(t, r, inspect.Scope{Namespace: "default"})
	rep := w.first(t)
	if len(rep.Results) != 4 {
		t.Fatalf("first report: %d locks, want 4", len(rep.Results))
	}
	wantVerdict(t, resultOf(t, rep, "default", lockName(demo)), v1alpha1.Live)
	wantVerdict(t, resultOf(t, rep, "default", lockName(lost)), v1alpha1.Stale, "next Job")
	wantVerdict(t, resultOf(t, rep, "default", lockName(idle)), v1alpha1.Unlocked)
	wantVerdict(t, resultOf(t, rep, "default", lockName(laptop)), v1alpha1.Foreign)
	tracker := srv.Tracker()
	leases := coordinationv1.SchemeGroupVersion.WithResource("leases")
	jobs := batchv1.SchemeGroupVersion.WithResource("jobs")

	// The Lease: taken by a workstation.
	if err := tracker.Update(leases, heldLease(idle, "bob@workstation"), "default"); err != nil {
		t.Fatal(err)
	}
	w.await(t, "default", lockName(idle), "idle's Lease taken", verdictIs(v1alpha1.Foreign, "holder host workstation"))

	// The holder pod: gone.
	if err := tracker.Delete(corev1.SchemeGroupVersion.WithResource("pods"), "default", demoPod); err != nil {
		t.Fatal(err)
	}
	w.await(t, "default", lockName(demo), "demo's holder pod deleted", verdictIs(v1alpha1.Stale, "holder pod "+demoPod+" no longer exists"))

	// The owner: deleted.
	if err := tracker.Delete(object.TerraformCluster.GVR(), "default", lost.Name); err != nil {
		t.Fatal(err)
	}
	c := w.await(t, "default", lockName(lost), "lost's owner deleted", verdictIs(v1alpha1.Stale, "terraformcluster/lost no longer exists"))
	if o := c.Result.Facts.Owner; o == nil || o.Exists == nil || *o.Exists {
		t.Errorf("owner %+v, want known gone", o)
	}

	// A runner Job of the owner: active, then finished.
	job := runnerJob(laptop, runnerJobName(laptop, 1), false)
	if err := tracker.Add(job); err != nil {
		t.Fatal(err)
	}
	w.await(t, "default", lockName(laptop), "laptop's Job started", func(c inspect.Change) bool {
		return !c.Deleted && c.Result.ActiveJobName() == job.Name && c.Result.Decision.Verdict == v1alpha1.Foreign
	})
	finished := runnerJob(laptop, job.Name, true)
	if err := tracker.Update(jobs, finished, "default"); err != nil {
		t.Fatal(err)
	}
	w.await(t, "default", lockName(laptop), "laptop's Job finished", func(c inspect.Change) bool {
		return !c.Deleted && c.Result.ActiveJobName() == ""
	})

	// The Lease: deleted.
	if err := tracker.Delete(leases, "default", lockName(idle)); err != nil {
		t.Fatal(err)
	}
	c = w.await(t, "default", lockName(idle), "idle's Lease deleted", func(c inspect.Change) bool { return c.Deleted })
	if c.Result.Decision.Verdict != v1alpha1.Foreign {
		t.Errorf("a deleted lock is reported with its last result, not %s", c.Result.Decision.Verdict)
	}
}

// A lock created during the watch is reported; CAPTF's own Leases and
// Leases out of scope are not.
func TestWatchReportsNewLocksInScopeOnly(t *testing.T) {
	srv, r := newReader(t, lockLease(idle, nil, nil), captfObject(idle, nil), captfObject(demo, nil), captfObject(web, nil))
	w := startWatch(t, r, inspect.Scope{Namespace: "default"})
	if rep := w.first(t); len(rep.Results) != 1 {
		t.Fatalf("first report: %d locks", len(rep.Results))
	}
	for _, o := range append(otherLeases("default"), heldLease(web, "alice@laptop")) {
		if err := srv.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	demoPod := runnerPodName(demo)
	if err := srv.Tracker().Add(podOf("default", demoPod, corev1.PodPending, true)); err != nil {
		t.Fatal(err)
	}
	if err := srv.Tracker().Add(heldLease(demo, "root@"+demoPod)); err != nil {
		t.Fatal(err)
	}
	w.await(t, "default", lockName(demo), "demo's lock created", verdictIs(v1alpha1.Live, "is Pending"))
	// Nothing else was reported: the next change is the one made next.
	if err := srv.Tracker().Delete(coordinationv1.SchemeGroupVersion.WithResource("leases"), "default", lockName(idle)); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-w.changes:
		if l := c.Result.Facts.Lease; l.Name != lockName(idle) || !c.Deleted {
			t.Errorf("reported %s/%s (deleted %v), want only idle's deletion", l.Namespace, l.Name, c.Deleted)
		}
	case <-time.After(watchDeadline):
		t.Fatal("idle's deletion not reported")
	}
}

// A change of the TerraformCluster a machine inherits from is a change of
// the machine's lock.
func TestWatchFollowsTheInheritedTerraformCluster(t *testing.T) {
	m, mu := machineOf("default", "web", "prod")
	tc := terraformCluster("default", "prod-tc", "prod")
	srv, r := newReader(t, heldLease(m, "root@"+runnerPodName(m)), mu, tc,
		capiCluster("default", "prod", infraRef(object.Group, "TerraformCluster", "prod-tc")))
	w := startWatch(t, r, inspect.Scope{})
	wantVerdict(t, resultOf(t, w.first(t), "default", lockName(m)), v1alpha1.Stale, "no Job is due", "terraformcluster/prod-tc spec.defaults.drift.intervalSeconds")
	on := tc.DeepCopy()
	if err := unstructured.SetNestedField(on.Object, int64(600), "spec", "defaults", "drift", "intervalSeconds"); err != nil {
		t.Fatal(err)
	}
	on.SetResourceVersion("")
	if err := srv.Tracker().Update(object.TerraformCluster.GVR(), on, "default"); err != nil {
		t.Fatal(err)
	}
	w.await(t, "default", lockName(m), "prod-tc's drift turned on", func(c inspect.Change) bool {
		return !c.Deleted && c.Result.Decision.Verdict == v1alpha1.Stale && !strings.Contains(c.Result.Decision.Reason, "no Job is due")
	})
}

// The Leases and the pods must be listed for a watch, as for a read: a
// list RBAC refuses ends it with that error. The Jobs need not: without
// them the watch goes on, saying what it cannot show.
func TestWatchListFailures(t *testing.T) {
	for _, resource := range []string{"leases", "pods"} {
		t.Run(resource, func(t *testing.T) {
			srv, r := newReader(t, heldLease(demo, "root@"+runnerPodName(demo)), captfObject(demo, nil))
			forbidden(srv, is("list", resource))
			ctx, cancel := context.WithTimeout(context.Background(), watchDeadline)
			defer cancel()
			err := r.Watch(ctx, inspect.Scope{Namespace: "default"},
				func(*inspect.Report) error { t.Error("a first report without " + resource); return nil },
				func(inspect.Change) error { return nil })
			if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "cannot list "+resource+` in namespace "default"`) {
				t.Errorf("Watch: %v (context %v)", err, ctx.Err())
			}
		})
	}
	t.Run("no CAPTF CRDs", func(t *testing.T) {
		srv, r := newReaderWith(t, fakeapi.Options{CustomResources: []fakeapi.CustomResource{}}, lockLease(idle, nil, nil))
		w := startWatch(t, r, inspect.Scope{Namespace: "default"})
		wantVerdict(t, resultOf(t, w.first(t), "default", lockName(idle)), v1alpha1.Unlocked)
		if err := srv.Tracker().Update(coordinationv1.SchemeGroupVersion.WithResource("leases"), heldLease(idle, "root@"+runnerPodName(idle)), "default"); err != nil {
			t.Fatal(err)
		}
		w.await(t, "default", lockName(idle), "idle's Lease taken", verdictIs(v1alpha1.Stale, "terraformcluster/idle no longer exists"))
	})
	t.Run("jobs", func(t *testing.T) {
		srv, r := newReader(t, heldLease(demo, "alice@laptop"), captfObject(demo, nil), lockLease(idle, nil, nil), captfObject(idle, nil))
		forbidden(srv, is("list", "jobs"))
		w := startWatch(t, r, inspect.Scope{Namespace: "default"})
		rep := w.first(t)
		if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "cannot list jobs.batch") {
			t.Errorf("warnings %q", rep.Warnings)
		}
		if err := srv.Tracker().Update(coordinationv1.SchemeGroupVersion.WithResource("leases"), heldLease(idle, "bob@workstation"), "default"); err != nil {
			t.Fatal(err)
		}
		c := w.await(t, "default", lockName(idle), "idle's Lease taken", verdictIs(v1alpha1.Foreign, "holder host workstation"))
		if len(c.Result.Unreadable) != 1 || c.Result.Unreadable[0] != "jobs" {
			t.Errorf("unreadable %v", c.Result.Unreadable)
		}
	})
}
