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
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// refuseOnce answers the first request match accepts with err, as an API
// server does right after a restart (its RBAC caches not filled: 403; an
// OIDC authenticator without its keys yet: 401), or as client-go's exec
// credential plugin sees once before it refreshes (401).
func refuseOnce(srv *fakeapi.Server, match func(fakeapi.Request) bool, err error) *atomic.Int32 {
	var n atomic.Int32
	srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if !match(fakeapi.RequestInfo(r)) || n.Add(1) != 1 {
			return false
		}
		fakeapi.WriteError(w, err)
		return true
	})
	return &n
}

func informerOf(resource string) func(fakeapi.Request) bool {
	return func(q fakeapi.Request) bool { return q.Resource == resource && (q.Verb == "watch" || q.Verb == "list") }
}

// waitAsked waits until every counter has seen a request.
func waitAsked(t *testing.T, counts ...*atomic.Int32) {
	t.Helper()
	deadline := time.Now().Add(watchDeadline)
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
			srv, r := newReader(t, heldLease(demo, "alice@laptop"), captfObject(demo, nil))
			r.failFor = 300 * time.Millisecond
			w := startWatch(t, r, inspect.Scope{Namespace: "default"})
			w.first(t)
			var counts []*atomic.Int32
			for _, res := range []string{"leases", "pods", "jobs", "terraformclusters", "terraformmachines", "terraformmachinepools"} {
				counts = append(counts, refuseOnce(srv, informerOf(res), failure))
			}
			srv.EndWatches()
			waitAsked(t, counts...)
			time.Sleep(500 * time.Millisecond) // past failFor: one failure is still not lasting
			srv.ResetRequests()
			if err := srv.Tracker().Update(coordinationv1.SchemeGroupVersion.WithResource("leases"), lockLease(demo, nil, nil), "default"); err != nil {
				t.Fatal(err)
			}
			w.await(t, "default", lockName(demo), "the release", verdictIs(v1alpha1.Unlocked, ""))
			if c := countWhere(srv.Requests(), readsKinds); c != 0 {
				t.Errorf("one failure turned the watch to reading live: %d lists of terraformmachines", c)
			}
		})
	}
}

// Once a kind's informer syncs again after it was judged down, changes
// are decided from the stores again.
func TestWatchReturnsToItsStores(t *testing.T) {
	srv, r := newReader(t, heldLease(demo, "alice@laptop"), captfObject(demo, nil))
	r.failFor = 300 * time.Millisecond
	w := startWatch(t, r, inspect.Scope{Namespace: "default"})
	w.first(t)
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
	deadline := time.Now().Add(watchDeadline)
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
	for i := 0; i < 40 && !ok; i++ {
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
			case <-time.After(watchDeadline):
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
	case <-time.After(2 * watchDeadline):
		t.Fatal("the watch still runs")
	}
}
