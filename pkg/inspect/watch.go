package inspect

import (
	"context"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// Change is a lock whose verdict, holder or reason changed, or which was
// deleted (Deleted, with the last Result known).
type Change struct {
	Result  Result
	Deleted bool
}

// Watch lists the locks in scope, hands them to initial, then watches the
// Leases and CAPTF's runner pods and calls changed for every lock whose
// verdict, holder or reason changes, until ctx ends. client-go's informers
// reconnect when a watch ends and relist when it expired (410 Gone); a lock
// is re-read through Lock, the same code as every verdict.
func (i *Inspector) Watch(ctx context.Context, s Scope, initial func(*Report) error, changed func(Change) error) error {
	rep, err := i.Locks(ctx, s)
	if err != nil {
		return err
	}
	if err := initial(rep); err != nil {
		return err
	}
	// A failed re-read ends the watch: a verdict is never left stale.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &watcher{in: i, scope: s, last: map[string]Result{}, byHost: map[string]map[string]bool{}, changed: changed, cancel: cancel}
	for _, r := range rep.Results {
		w.remember(r)
	}
	opts := func(sel string) informers.SharedInformerOption {
		return informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel })
	}
	leases := informers.NewSharedInformerFactoryWithOptions(i.Client, 0, informers.WithNamespace(s.Namespace), opts(s.Selector))
	pods := informers.NewSharedInformerFactoryWithOptions(i.Client, 0, informers.WithNamespace(s.Namespace), opts(LabelManaged+"=true"))
	li, pi := leases.Coordination().V1().Leases().Informer(), pods.Core().V1().Pods().Informer()
	ready := make(chan struct{})
	handler := func(fn func(obj any, deleted bool)) cache.ResourceEventHandler {
		on := func(obj any, deleted bool) {
			select {
			case <-ready:
				fn(obj, deleted)
			default: // the informers' own initial list: already printed
			}
		}
		return cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { on(obj, false) },
			UpdateFunc: func(_, obj any) { on(obj, false) },
			DeleteFunc: func(obj any) { on(obj, true) },
		}
	}
	if _, err := li.AddEventHandler(handler(w.lease)); err != nil {
		return err
	}
	if _, err := pi.AddEventHandler(handler(w.pod)); err != nil {
		return err
	}
	leases.Start(ctx.Done())
	pods.Start(ctx.Done())
	defer leases.Shutdown()
	defer pods.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), li.HasSynced, pi.HasSynced) {
		return ctx.Err()
	}
	close(ready)
	<-ctx.Done()
	return w.err()
}

type watcher struct {
	in    *Inspector
	scope Scope
	mu    sync.Mutex
	// last is each lock's last result, by namespace/name; byHost maps a
	// holder pod (namespace/name) to the locks it holds.
	last     map[string]Result
	byHost   map[string]map[string]bool
	changed  func(Change) error
	cancel   context.CancelFunc
	firstErr error
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

func (w *watcher) lease(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	l, ok := obj.(*coordinationv1.Lease)
	if !ok || !IsLockLease(l.Name) {
		return
	}
	w.recheck(l.Namespace, l.Name, deleted)
}

func (w *watcher) pod(obj any, _ bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	// Collect the Leases under the lock: recheck takes it again, and last
	// changes under it.
	w.mu.Lock()
	var leases [][2]string
	for k := range w.byHost[key(p.Namespace, p.Name)] {
		if l := w.last[k].Facts.Lease; l.Name != "" {
			leases = append(leases, [2]string{l.Namespace, l.Name})
		}
	}
	w.mu.Unlock()
	for _, l := range leases {
		w.recheck(l[0], l[1], false)
	}
}

// recheck re-reads one lock and reports it when what a reader sees changed.
func (w *watcher) recheck(ns, name string, deleted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := key(ns, name)
	prev, known := w.last[k]
	if deleted {
		if known {
			delete(w.last, k)
			w.report(Change{Result: prev, Deleted: true})
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, _, err := w.in.Lock(ctx, ns, name)
	if err != nil {
		w.fail(fmt.Errorf("re-reading %s/%s: %w", ns, name, err))
		return
	}
	if p := r.Facts.Lease; !w.scope.AllWorkspaces && p.Workspace != "default" {
		return
	}
	if known && same(prev, *r) {
		return
	}
	w.remember(*r)
	w.report(Change{Result: *r})
}

// same is true when a reader would see no difference.
func same(a, b Result) bool {
	return a.Decision.Verdict == b.Decision.Verdict && a.Decision.Reason == b.Decision.Reason &&
		a.Facts.Lease.ID == b.Facts.Lease.ID && a.Facts.Lease.Held == b.Facts.Lease.Held && a.ActiveJob.name() == b.ActiveJob.name()
}

func (w *watcher) report(c Change) {
	if err := w.changed(c); err != nil {
		w.fail(err)
	}
}

func (w *watcher) fail(err error) {
	if w.firstErr == nil {
		w.firstErr = err
		w.cancel()
	}
}

func (w *watcher) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.firstErr
}
