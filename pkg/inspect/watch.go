package inspect

import (
	"context"
	"errors"
	"fmt"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// Change is a lock whose verdict, holder or reason changed, or which was
// deleted (Deleted, with the last Result known).
type Change struct {
	Result  Result
	Deleted bool
}

// Watch follows the locks in scope until ctx ends: it hands the first
// report to initial, then calls changed for every lock whose verdict,
// holder or reason changes.
//
// Nothing that happens between the first report and the watch is lost.
// The informers on the Leases and on CAPTF's runner pods start first and
// list; only once they have synced are the locks read, by Locks, the code
// of every verdict. Each change the informers see after their own list is
// queued, and handled after the first report: a change before the read is
// in the report, a change after the informers' list is in the queue, and
// the read comes after that list. A queued lock that looks as it did in
// the report prints nothing.
//
// One goroutine handles the queue and owns what was shown; the informers'
// handlers only queue keys. A lock is re-read through Lock, on ctx, so
// Ctrl-C ends a re-read at once. client-go's informers reconnect when a
// watch ends and relist when it expired (410 Gone).
func (i *Inspector) Watch(ctx context.Context, s Scope, initial func(*Report) error, changed func(Change) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	q := workqueue.NewTyped[watchKey]()
	defer q.ShutDown()
	go func() {
		<-ctx.Done()
		q.ShutDown()
	}()
	selected := func(sel string) informers.SharedInformerOption {
		return informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel })
	}
	leases := informers.NewSharedInformerFactoryWithOptions(i.Client, 0, informers.WithNamespace(s.Namespace), selected(s.Selector))
	pods := informers.NewSharedInformerFactoryWithOptions(i.Client, 0, informers.WithNamespace(s.Namespace), selected(LabelManaged+"=true"))
	li, pi := leases.Coordination().V1().Leases().Informer(), pods.Core().V1().Pods().Informer()
	if _, err := li.AddEventHandler(queueing(q, leaseKey)); err != nil {
		return err
	}
	if _, err := pi.AddEventHandler(queueing(q, podKey)); err != nil {
		return err
	}
	// A list that fails before the first sync (RBAC, an unreachable server)
	// ends the watch with that error, as a plain listing would; the
	// reflector would otherwise retry it forever, printing nothing. Later
	// failures are retried: the informers relist and nothing is missed.
	var syncErr error
	var syncOnce sync.Once
	failed := func(resource string) cache.WatchErrorHandler {
		return func(_ *cache.Reflector, err error) {
			syncOnce.Do(func() {
				syncErr = readError("list", resource, s.Namespace, err)
				cancel()
			})
		}
	}
	if err := li.SetWatchErrorHandler(failed("leases")); err != nil {
		return err
	}
	if err := pi.SetWatchErrorHandler(failed("pods")); err != nil {
		return err
	}
	leases.Start(ctx.Done())
	pods.Start(ctx.Done())
	defer leases.Shutdown()
	defer pods.Shutdown()
	defer cancel() // before the Shutdowns, which wait for the informers
	ok := cache.WaitForCacheSync(ctx.Done(), li.HasSynced, pi.HasSynced)
	syncOnce.Do(func() {}) // from here on, a failed list is retried
	if !ok {
		return syncErr // nil when ctx ended it
	}
	rep, err := i.Locks(ctx, s)
	if err != nil {
		return err
	}
	if err := initial(rep); err != nil {
		return err
	}
	w := &watcher{in: i, scope: s, leases: li.GetIndexer(), last: map[string]Result{}, byHost: map[string]map[string]bool{}, changed: changed}
	for _, r := range rep.Results {
		w.remember(r)
	}
	for {
		k, shutdown := q.Get()
		if shutdown || ctx.Err() != nil {
			return nil
		}
		err := w.handle(ctx, k)
		q.Done(k)
		if err != nil && ctx.Err() == nil {
			return err // a verdict is never left stale
		}
	}
}

// watchKey is one queued change: a lock Lease, or a runner pod. It says
// only which: whether a Lease is gone is decided when the key is handled,
// from the informer's store, so that keys the queue merges (an update,
// then a deletion and a re-creation) still end in what is there now.
type watchKey struct {
	pod             bool
	namespace, name string
}

func leaseKey(obj any) (watchKey, bool) {
	l, ok := obj.(*coordinationv1.Lease)
	if !ok || !IsLockLease(l.Name) {
		return watchKey{}, false
	}
	return watchKey{namespace: l.Namespace, name: l.Name}, true
}

func podKey(obj any) (watchKey, bool) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return watchKey{}, false
	}
	return watchKey{pod: true, namespace: p.Namespace, name: p.Name}, true
}

// queueing is an informer handler that queues every change after the
// informer's own first list; that list is what the first report covers.
func queueing(q workqueue.TypedInterface[watchKey], keyOf func(obj any) (watchKey, bool)) cache.ResourceEventHandler {
	add := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if k, ok := keyOf(obj); ok {
			q.Add(k)
		}
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initialList bool) {
			if !initialList {
				add(obj)
			}
		},
		UpdateFunc: func(_, obj any) { add(obj) },
		DeleteFunc: add,
	}
}

// watcher is what the watch has reported, owned by the goroutine that
// handles the queue.
type watcher struct {
	in    *Inspector
	scope Scope
	// leases is the lease informer's store: a Lease not in it is gone, or
	// has left the selector.
	leases cache.Store
	// last is each lock's last result, by namespace/name; byHost maps a
	// holder pod (namespace/name) to the locks it holds.
	last    map[string]Result
	byHost  map[string]map[string]bool
	changed func(Change) error
}

func key(ns, name string) string { return ns + "/" + name }

func (w *watcher) remember(r Result) {
	l := r.Facts.Lease
	k := key(l.Namespace, l.Name)
	w.last[k] = r
	if l.Host != "" {
		h := key(l.Namespace, l.Host)
		if w.byHost[h] == nil {
			w.byHost[h] = map[string]bool{}
		}
		w.byHost[h][k] = true
	}
}

// handle re-checks the locks a queued change touches.
func (w *watcher) handle(ctx context.Context, k watchKey) error {
	if !k.pod {
		return w.recheck(ctx, k.namespace, k.name)
	}
	for lk := range w.byHost[key(k.namespace, k.name)] {
		l := w.last[lk].Facts.Lease
		if l.Name == "" {
			continue
		}
		if err := w.recheck(ctx, l.Namespace, l.Name); err != nil {
			return err
		}
	}
	return nil
}

// recheck re-reads one lock and reports it when what a reader sees
// changed; a lock that is gone (or has left the selector) is reported
// deleted.
func (w *watcher) recheck(ctx context.Context, ns, name string) error {
	k := key(ns, name)
	prev, known := w.last[k]
	var r *Result
	_, present, err := w.leases.GetByKey(k)
	deleted := err == nil && !present
	if !deleted {
		var err error
		r, _, err = w.in.Lock(ctx, ns, name)
		var none *NoLeaseError
		switch {
		case errors.As(err, &none):
			deleted = true
		case err != nil:
			return fmt.Errorf("re-reading %s/%s: %w", ns, name, err)
		}
	}
	if deleted {
		if !known {
			return nil
		}
		delete(w.last, k)
		return w.changed(Change{Result: prev, Deleted: true})
	}
	if !w.scope.AllWorkspaces && r.Facts.Lease.Workspace != object.DefaultWorkspace {
		return nil
	}
	if known && same(prev, *r) {
		return nil
	}
	w.remember(*r)
	return w.changed(Change{Result: *r})
}

// same is true when a reader would see no difference.
func same(a, b Result) bool {
	return a.Decision.Verdict == b.Decision.Verdict && a.Decision.Reason == b.Decision.Reason &&
		a.Facts.Lease.ID == b.Facts.Lease.ID && a.Facts.Lease.Held == b.Facts.Lease.Held && a.ActiveJob.name() == b.ActiveJob.name()
}
