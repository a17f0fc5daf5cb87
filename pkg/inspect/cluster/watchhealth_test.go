package cluster

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

func informerOf(resource string) func(fakeapi.Request) bool {
	return func(q fakeapi.Request) bool { return q.Resource == resource && (q.Verb == "watch" || q.Verb == "list") }
}

// waitAsked waits until every counter has seen a request.
func waitAsked(t *testing.T, counts ...*atomic.Int32) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for _, n := range counts {
		for n.Load() == 0 {
			if time.Now().After(deadline) {
				t.Fatal("an informer did not ask again")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// One failed list or watch of each informer after the first report, then
// the server answers again: whether the failure is transient (500, 429,
// 503) or a refusal (403, 401: an API server right after a restart, a
// credential plugin about to refresh), the watch goes on, shows the next
// change, and still decides it from its stores.
func TestWatchOutlivesOneFailure(t *testing.T) {
	for name, failure := range map[string]error{
		"403": apierrors.NewForbidden(schema.GroupResource{}, "", errors.New("RBAC: informers not synced")),
		"401": apierrors.NewUnauthorized("Unauthorized"),
		"500": apierrors.NewInternalError(errors.New("etcd leader changed")),
		"429": apierrors.NewTooManyRequests("slow down", 1),
		"503": apierrors.NewServiceUnavailable("starting"),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, _, w, _ := demoWatch(t, 300*time.Millisecond)
			var counts []*atomic.Int32
			for _, res := range []string{"leases", "pods", "jobs", "terraformclusters", "terraformmachines", "terraformmachinepools"} {
				counts = append(counts, refuseN(srv, 1, informerOf(res), failure))
			}
			srv.EndWatches()
			waitAsked(t, counts...)
			time.Sleep(500 * time.Millisecond) // past failFor: one failure is still not lasting
			srv.ResetRequests()
			releaseDemo(t, srv, w, "the release")
			if c := countWhere(srv.Requests(), readsKinds); c != 0 {
				t.Errorf("one failure turned the watch to reading live: %d lists of terraformmachines", c)
			}
		})
	}
}

// Once a kind's informer syncs again after it was judged down, changes
// are decided from the stores again.
func TestWatchReturnsToItsStores(t *testing.T) {
	t.Parallel()
	srv, _, w, _ := demoWatch(t, 300*time.Millisecond)
	remove := srv.Intercept(func(wr http.ResponseWriter, req *http.Request) bool {
		if info := fakeapi.RequestInfo(req); info.Resource == "jobs" && (info.Verb == "list" || info.Verb == "watch") {
			fakeapi.WriteError(wr, apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "", errors.New("RBAC says no")))
			return true
		}
		return false
	})
	srv.EndWatches()
	// Judged down: the whole scope is read again (its lock unchanged,
	// nothing is shown); then a change is read live.
	reads := func() int { return countWhere(srv.Requests(), readsKinds) }
	deadline := time.Now().Add(time.Minute)
	for reads() < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if reads() < 2 {
		t.Fatal("the Jobs refused for good, and the watch never read its scope again")
	}
	remove()
	// Once the Jobs' informer has listed again (its backoff is up to a
	// few seconds here), a change is decided from the stores.
	ok := false
	for i := 0; i < 120 && !ok; i++ {
		time.Sleep(250 * time.Millisecond)
		srv.ResetRequests()
		sentinel := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "sentinel-" + time.Now().Format("150405.000")}
		if err := srv.Tracker().Create(coordinationv1.SchemeGroupVersion.WithResource("leases"), lockLease(sentinel, nil, nil), "default"); err != nil {
			t.Fatal(err)
		}
		w.await(t, "default", lockName(sentinel), "a sentinel", func(inspect.Change) bool { return true })
		ok = countWhere(srv.Requests(), readsKinds) == 0
	}
	if !ok {
		t.Error("the watch still reads every change live after the Jobs' informer came back")
	}
}

// readsKinds is a list of TerraformMachines by Read or ReadLock, not by
// an informer (whose lists carry a resourceVersion).
func readsKinds(q fakeapi.Request) bool {
	return q.Verb == "list" && q.Resource == "terraformmachines" && !q.Query.Has("resourceVersion")
}

// The Leases refused for good while the first report is being read: the
// watch ends with the refusal, not with the error of the read it cancelled.
func TestWatchLastingFailureDuringTheFirstRead(t *testing.T) {
	t.Parallel()
	srv, r := newReader(t, heldLease(demo, "alice@laptop"), captfObject(demo, nil))
	r.failFor = 300 * time.Millisecond
	var once sync.Once
	srv.Intercept(func(w http.ResponseWriter, req *http.Request) bool {
		q := fakeapi.RequestInfo(req)
		// Read's own list carries no resourceVersion; the informer's do.
		if q.Resource != "leases" || q.Verb != "list" || q.Query.Has("resourceVersion") {
			return false
		}
		hit := false
		once.Do(func() {
			hit = true
			forbidden(srv, func(q fakeapi.Request) bool {
				return q.Resource == "leases" && (q.Verb == "watch" || q.Verb == "list" && q.Query.Has("resourceVersion"))
			})
			srv.EndWatches()
			select { // held until the watch gives up on it
			case <-req.Context().Done():
			case <-time.After(time.Minute):
			}
		})
		return hit
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- r.Watch(ctx, inspect.Scope{Namespace: "default"},
			func(*inspect.Report) error { return nil }, func(inspect.Change) error { return nil })
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "cannot list leases") || !strings.Contains(err.Error(), "forbidden") {
			t.Errorf("the watch ended with %v, want the refused list", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the watch still runs")
	}
}

// refuseN answers the first n requests match accepts with err.
func refuseN(srv *fakeapi.Server, n int32, match func(fakeapi.Request) bool, err error) *atomic.Int32 {
	var c atomic.Int32
	srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if !match(fakeapi.RequestInfo(r)) || c.Add(1) > n {
			return false
		}
		fakeapi.WriteError(w, err)
		return true
	})
	return &c
}

// countAll counts every request match accepts.
func countAll(srv *fakeapi.Server, match func(fakeapi.Request) bool) *atomic.Int32 {
	var c atomic.Int32
	srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if match(fakeapi.RequestInfo(r)) {
			c.Add(1)
		}
		return false
	})
	return &c
}

func waitAtLeast(t *testing.T, c *atomic.Int32, n int32, what string) {
	t.Helper()
	deadline := time.Now().Add(6 * watchDeadline)
	for c.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d requests, want %d", what, c.Load(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Two refusals within failFor (the reflector's backoff puts 0.8-1.6 s
// between them) do not count: the window itself.
func TestWatchTwoQuickRefusalsDoNotCount(t *testing.T) {
	t.Parallel()
	srv, _, w, _ := demoWatch(t, 5*time.Second)
	c := refuseN(srv, 2, informerOf("leases"), apierrors.NewForbidden(leasesGR, "", errors.New("RBAC: informers not synced")))
	srv.EndWatches()
	waitAtLeast(t, c, 3, "leases informer") // two refused, then one answered
	releaseDemo(t, srv, w, "the release after two quick refusals")
}

// Two isolated one-shot refusals of the Leases, failFor apart, with a
// successful list and watch in between but no write (so the informer's
// resourceVersion does not move, as a quiet resource's does not): two
// refusals are no streak, and the watch goes on.
func TestWatchTwoIsolatedRefusalsDoNotCount(t *testing.T) {
	t.Parallel()
	srv, _, w, _ := demoWatch(t, 300*time.Millisecond)
	refusal := apierrors.NewForbidden(leasesGR, "", errors.New("RBAC: informers not synced"))
	c1 := refuseN(srv, 1, informerOf("leases"), refusal)
	srv.EndWatches()
	waitAtLeast(t, c1, 3, "first round") // refused, then answered twice (list and watch, or watch and more)
	time.Sleep(600 * time.Millisecond)   // > failFor, as two refusals minutes apart would be > 45 s
	c2 := refuseN(srv, 1, informerOf("leases"), refusal)
	srv.EndWatches()
	waitAtLeast(t, c2, 1, "second round")
	time.Sleep(200 * time.Millisecond)
	releaseDemo(t, srv, w, "the release after two isolated refusals")
}

// Once the kinds are judged down (and the scope read again), the next
// change of another input is decided live, as a fresh read decides it,
// not from the kinds' stale stores.
func TestWatchDownMeansLive(t *testing.T) {
	t.Parallel()
	srv, r, w, _ := demoWatch(t, 300*time.Millisecond)
	unserveKinds(srv)
	srv.EndWatches()
	w.await(t, "default", lockName(demo), "the kinds no longer served", func(c inspect.Change) bool { return !c.Deleted })
	id, info := "another-id", lockInfoOf("another-id", "bob@workstation")
	if err := srv.Tracker().Update(coordinationv1.SchemeGroupVersion.WithResource("leases"), lockLease(demo, &id, &info), "default"); err != nil {
		t.Fatal(err)
	}
	c := w.await(t, "default", lockName(demo), "the new holder", func(c inspect.Change) bool { return !c.Deleted && c.Result.Facts.Lease.ID == "another-id" })
	_, fresh := readOne(t, r, "default", lockName(demo))
	if c.Result.Decision.Reason != fresh.Decision.Reason || c.Result.Decision.Verdict != fresh.Decision.Verdict {
		t.Errorf("the watch shows %s (%s); a fresh read %s (%s)", c.Result.Decision.Verdict, c.Result.Decision.Reason, fresh.Decision.Verdict, fresh.Decision.Reason)
	}
}

// 500s on the Leases and the Jobs for longer than failFor (three failed
// requests each): the watch neither ends nor reads the scope again.
func TestWatchPersistentTransientErrorsDoNotCount(t *testing.T) {
	t.Parallel()
	srv, _, w, _ := demoWatch(t, 300*time.Millisecond)
	srv.ResetRequests()
	down := apierrors.NewInternalError(errors.New("etcd leader changed"))
	cl := refuseN(srv, 3, informerOf("leases"), down)
	cj := refuseN(srv, 3, informerOf("jobs"), down)
	srv.EndWatches()
	waitAtLeast(t, cl, 4, "leases")
	waitAtLeast(t, cj, 4, "jobs")
	releaseDemo(t, srv, w, "the release")
	if c := countWhere(srv.Requests(), readsKinds); c != 0 {
		t.Errorf("500s turned the watch to reading live: %d lists of terraformmachines", c)
	}
}

// The CAPI Clusters refused for good: nothing is read again (N1).
func TestWatchClustersRefusedDoNotDegrade(t *testing.T) {
	t.Parallel()
	srv, _, w, _ := demoWatch(t, 300*time.Millisecond)
	srv.ResetRequests()
	cc := countAll(srv, informerOf("clusters"))
	forbidden(srv, informerOf("clusters"))
	srv.EndWatches()
	waitAtLeast(t, cc, 3, "clusters")
	releaseDemo(t, srv, w, "the release")
	if c := countWhere(srv.Requests(), readsKinds); c != 0 {
		t.Errorf("the Clusters' refusal turned the watch to reading live: %d lists of terraformmachines", c)
	}
}

// Jobs refused for good with several locks shown: the scope is read again
// once, not once per lock.
func TestWatchReadsTheScopeOnceForAll(t *testing.T) {
	t.Parallel()
	srv, _, _, _ := demoWatch(t, 300*time.Millisecond,
		heldLease(idle, "bob@laptop"), captfObject(idle, nil), heldLease(lost, "carol@laptop"), captfObject(lost, nil))
	srv.ResetRequests()
	reads := countAll(srv, readsKinds)
	forbidden(srv, informerOf("jobs"))
	srv.EndWatches()
	waitAtLeast(t, reads, 1, "the scope read again")
	time.Sleep(1 * time.Second)
	if n := reads.Load(); n != 1 {
		t.Errorf("%d lists of terraformmachines after the Jobs were judged down, want 1", n)
	}
}

var leasesGR = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

// demoWatch watches namespace default, where demo's lock is held from a
// workstation (Foreign), with more objects; its informers are judged down
// after failFor of lasting errors. It returns past the first report.
func demoWatch(t *testing.T, failFor time.Duration, more ...runtime.Object) (*fakeapi.Server, *Reader, *watching, *inspect.Report) {
	t.Helper()
	srv, r := newReader(t, append([]runtime.Object{heldLease(demo, "alice@laptop"), captfObject(demo, nil)}, more...)...)
	r.failFor = failFor
	w := startWatch(t, r, inspect.Scope{Namespace: "default"})
	w.patience = time.Minute
	return srv, r, w, w.first(t)
}

// releaseDemo frees demo's lock and waits for the watch to show it
// Unlocked.
func releaseDemo(t *testing.T, srv *fakeapi.Server, w *watching, what string) {
	t.Helper()
	if err := srv.Tracker().Update(coordinationv1.SchemeGroupVersion.WithResource("leases"), lockLease(demo, nil, nil), "default"); err != nil {
		t.Fatal(err)
	}
	w.await(t, "default", lockName(demo), what, verdictIs(v1alpha1.Unlocked, ""))
}

// unserveKinds answers 404 to every request for the three CAPTF kinds, as
// a cluster whose CRDs were removed does.
func unserveKinds(srv *fakeapi.Server) {
	srv.Intercept(func(wr http.ResponseWriter, req *http.Request) bool {
		switch info := fakeapi.RequestInfo(req); info.Resource {
		case "terraformclusters", "terraformmachines", "terraformmachinepools":
			fakeapi.WriteError(wr, apierrors.NewNotFound(schema.GroupResource{Group: info.Group, Resource: info.Resource}, ""))
			return true
		}
		return false
	})
}
