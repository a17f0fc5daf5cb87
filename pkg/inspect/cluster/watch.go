package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// Watch follows the locks in scope until ctx ends: it hands the first
// report to initial, then calls changed for every lock whose verdict,
// holder, reason or active Job changes, whichever input of its verdict
// changed: its Lease, the pod its holder names, one of its owner's runner
// Jobs, its owner (created, deleted, or its gates changed), the
// TerraformCluster the owner inherits from, or the Cluster API Cluster
// through which it does.
//
// Nothing that happens between the first report and the watch is lost.
// Informers on the Leases, CAPTF's runner pods and Jobs, and the three
// kinds start first and list; only once they have synced is the scope
// read, by Read, and decided. Each change the informers see after their
// own list is queued, and handled after the first report: a change before
// the read is in the report, a change after the informers' list is in the
// queue, and the read comes after that list. A queued lock is read again
// from the informers' stores (or by ReadLock when one of the optional
// lists failed) and decided; one that looks as it did prints nothing.
//
// One goroutine handles the queue and owns what was shown; the informers'
// handlers only queue keys. client-go's informers reconnect when a watch
// ends and relist when it expired (410 Gone). The Leases' and pods'
// informers must list, as Read must: a failure before their first sync
// ends the watch with its error. The Jobs', the kinds' and the Clusters'
// may not (RBAC, a kind not served): then their changes are not followed,
// as Read shows them unreadable.
//
// The pod informer follows CAPTF's labelled runner pods. A holder pod
// without that label (a person removed it) is followed by a watch of that
// one pod by name, for as long as a lock's holder names it and it exists,
// for up to maxPodWatches such pods; past that, such a pod's change is
// seen only with another change of its lock's inputs.
func (r *Reader) Watch(ctx context.Context, s inspect.Scope, initial func(*inspect.Report) error, changed func(inspect.Change) error) error {
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
	managed := inspect.LabelManaged + "=true"
	leases := informers.NewSharedInformerFactoryWithOptions(r.Client, 0, informers.WithNamespace(s.Namespace), selected(s.Selector))
	runners := informers.NewSharedInformerFactoryWithOptions(r.Client, 0, informers.WithNamespace(s.Namespace), selected(managed))
	li, pi := leases.Coordination().V1().Leases().Informer(), runners.Core().V1().Pods().Informer()
	ji := runners.Batch().V1().Jobs().Informer()
	objs := metadatainformer.NewFilteredSharedInformerFactory(r.Metadata, 0, s.Namespace, nil)
	w := &watcher{r: r, ctx: ctx, q: q, scope: s, leases: li.GetIndexer(), runners: pi.GetStore(), jobs: ji.GetIndexer(),
		kinds: map[string]cache.Indexer{}, full: map[object.Ref]*unstructured.Unstructured{},
		last: map[string]inspect.Result{}, hostOf: map[string]string{}, byHost: map[string]map[string]bool{},
		tcOf: map[string]string{}, byTC: map[string]map[string]bool{}, pods: map[string]*podWatch{}, changed: changed}
	defer w.stopPods()
	for _, h := range []struct {
		inf cache.SharedIndexInformer
		key func(any) []watchKey
	}{{li, leaseKey}, {pi, podKey}, {ji, jobKey}} {
		if _, err := h.inf.AddEventHandler(queueing(q, h.key)); err != nil {
			return err
		}
	}
	kindInformers := map[string]cache.SharedIndexInformer{}
	for _, k := range object.Kinds {
		inf := objs.ForResource(k.GVR()).Informer()
		kindInformers[k.Name] = inf
		w.kinds[k.Name] = inf.GetIndexer()
		if _, err := inf.AddEventHandler(queueing(q, func(obj any) []watchKey { return w.objectKeys(k, obj) })); err != nil {
			return err
		}
	}
	// Clusters: a change of one (its infrastructureRef) changes what its
	// machines and pools inherit.
	ci := objs.ForResource(ClusterGVR).Informer()
	kindInformers["Cluster"] = ci
	if _, err := ci.AddEventHandler(queueing(q, clusterKey)); err != nil {
		return err
	}
	// A required list that fails before the first sync (RBAC, an
	// unreachable server) ends the watch with that error, as a plain
	// listing would; the reflector would otherwise retry it forever,
	// printing nothing. An optional one stops instead, and is not waited
	// for. Later failures are retried: the informers relist and nothing is
	// missed; but one that keeps failing for lastingFor with an error
	// retries may not mend (health: RBAC revoked, credentials gone, a
	// CRD removed) ends the watch when a required list fails so, and
	// reads the whole scope again, then every change live, when an
	// optional one does, until it syncs again.
	required := map[cache.SharedIndexInformer]string{li: "leases", pi: "pods"}
	optional := map[cache.SharedIndexInformer]string{ji: "jobs.batch"}
	for name, inf := range kindInformers {
		if k, ok := object.KindByName(name); ok {
			optional[inf] = k.Resource + "." + object.Group
		} else {
			optional[inf] = ClusterGVR.Resource + "." + ClusterGVR.Group
		}
	}
	stops := map[cache.SharedIndexInformer]chan struct{}{}
	for inf := range optional {
		stops[inf] = make(chan struct{})
	}
	var mu sync.Mutex
	var syncErr error
	synced := false
	stopped := map[cache.SharedIndexInformer]bool{}
	w.health = newHealth(r.lastingFor())
	w.followed = []cache.SharedIndexInformer{ji}
	for _, k := range object.Kinds {
		w.followed = append(w.followed, kindInformers[k.Name])
	}
	for inf, resource := range required {
		err := inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
			mu.Lock()
			defer mu.Unlock()
			// Before the first sync, any failure ends the watch; after
			// it, a lasting one (the permission revoked, the
			// credentials gone for good): the rows would otherwise stop
			// changing without a word.
			if syncErr == nil && (!synced || w.health.failed(inf, err)) {
				syncErr = readError("list", resource, s.Namespace, err)
				cancel()
			}
		})
		if err != nil {
			return err
		}
	}
	for inf := range optional {
		stop := stops[inf]
		err := inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case !synced && stop != nil:
				close(stop)
				stop = nil
				stopped[inf] = true
			case synced && inf != ci && w.health.failed(inf, err):
				// Its store no longer follows the cluster (a CRD
				// removed, RBAC revoked): every lock is read again now,
				// and each change live until it syncs again. (The
				// Clusters' store is not read: they are read live.)
				q.Add(watchKey{name: allLocks})
			}
		})
		if err != nil {
			return err
		}
	}
	var running sync.WaitGroup
	defer func() { cancel(); running.Wait() }()
	waitFor := []cache.InformerSynced{li.HasSynced, pi.HasSynced}
	for inf := range required {
		running.Go(func() { inf.Run(ctx.Done()) })
	}
	for inf := range optional {
		stop := stops[inf]
		running.Go(func() { inf.Run(mergeDone(ctx.Done(), stop)) })
		waitFor = append(waitFor, func() bool {
			select {
			case <-stop:
				return true // failed: not followed
			default:
				return inf.HasSynced()
			}
		})
	}
	ok := cache.WaitForCacheSync(ctx.Done(), waitFor...)
	mu.Lock()
	synced = true // from here on, a failed list is retried
	err := syncErr
	// A lock is decided from the stores only when every list a read
	// makes is followed: else ReadLock reads it, and shows what failed.
	w.fromStores = !stopped[ji]
	for _, k := range object.Kinds {
		w.fromStores = w.fromStores && !stopped[kindInformers[k.Name]]
	}
	mu.Unlock()
	if !ok {
		return err // nil when ctx ended it
	}
	snap, err := r.Read(ctx, s)
	if err != nil {
		mu.Lock()
		defer mu.Unlock()
		if syncErr != nil {
			return syncErr // what cancelled the read
		}
		return err
	}
	rep := inspect.Decide(snap)
	if err := initial(rep); err != nil {
		return err
	}
	for _, res := range rep.Results {
		w.remember(res, snap)
	}
	for {
		k, shutdown := q.Get()
		if shutdown || ctx.Err() != nil {
			mu.Lock()
			defer mu.Unlock()
			return syncErr // nil when ctx ended it
		}
		err := w.recheck(ctx, k.namespace, k.name)
		q.Done(k)
		if err != nil && ctx.Err() == nil {
			return err // a verdict is never left stale
		}
	}
}

// mergeDone is closed when either a or b is.
func mergeDone(a <-chan struct{}, b chan struct{}) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		select {
		case <-a:
		case <-b:
		}
		close(out)
	}()
	return out
}

// watchKey is one queued lock, by its Lease: whether it is gone is decided
// when the key is handled, from the informer's store, so that keys the
// queue merges (an update, then a deletion and a re-creation) still end in
// what is there now.
type watchKey struct{ namespace, name string }

// leaseKey is a lock Lease's own key.
func leaseKey(obj any) []watchKey {
	l, ok := obj.(*coordinationv1.Lease)
	if !ok || !inspect.IsLockLease(l.Name) {
		return nil
	}
	return []watchKey{{l.Namespace, l.Name}}
}

// podKey is a pod's key; the watcher maps it to the locks it holds.
func podKey(obj any) []watchKey {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	return []watchKey{{p.Namespace, podPrefix + p.Name}}
}

// Prefixes of the keys that name something other than a lock: no Lease
// name (a DNS subdomain) holds a ":".
const (
	podPrefix     = "pod:"
	tcPrefix      = "terraformcluster:"
	clusterPrefix = "cluster:"
	// namespacePrefix alone names every lock of the key's namespace.
	namespacePrefix = "namespace:"
	// allLocks names every lock the watch shows.
	allLocks = "all:"
)

// clusterKey is a Cluster API Cluster's key; the watcher maps it to the
// locks of the machines and pools labelled with its name.
func clusterKey(obj any) []watchKey {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return nil
	}
	return []watchKey{{m.Namespace, clusterPrefix + m.Name}}
}

// jobKey is the lock of a runner Job's controller: the object it runs for.
func jobKey(obj any) []watchKey {
	j, ok := obj.(*batchv1.Job)
	if !ok {
		return nil
	}
	c := metav1.GetControllerOfNoCopy(j)
	if c == nil {
		return nil
	}
	k, ok := object.KindByName(c.Kind)
	if !ok {
		return nil
	}
	ref := object.Ref{Kind: k, Namespace: j.Namespace, Name: c.Name}
	return []watchKey{{j.Namespace, object.LockLeaseName(object.DefaultWorkspace, ref.Suffix())}}
}

// objectKeys is the lock of a CAPTF object; for a TerraformCluster, also
// the locks of the machines and pools that inherit from it: those whose
// last read found it (by its key), and those of the Cluster its
// cluster-name label names, which a lookup after a change may find.
func (w *watcher) objectKeys(k object.Kind, obj any) []watchKey {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return nil
	}
	ref := object.Ref{Kind: k, Namespace: m.Namespace, Name: m.Name}
	keys := []watchKey{{m.Namespace, object.LockLeaseName(object.DefaultWorkspace, ref.Suffix())}}
	if w.objectsIn(m.Namespace) <= 1 {
		// The namespace just lost its last object, or has its first:
		// whether CAPTF's orphan sweep deletes its Leases changed for
		// every lock in it.
		keys = append(keys, watchKey{m.Namespace, namespacePrefix})
	}
	if k != object.TerraformCluster {
		return keys
	}
	keys = append(keys, watchKey{m.Namespace, tcPrefix + m.Name})
	if cl := m.Labels[jobgate.ClusterNameLabel]; cl != "" {
		keys = append(keys, w.labelled(m.Namespace, cl)...)
	}
	return keys
}

// objectsIn counts the CAPTF objects of namespace ns in the kinds'
// stores, by their namespace index (safe from any goroutine), up to 2: it
// runs for every object event, so it never scans the whole store.
func (w *watcher) objectsIn(ns string) int {
	n := 0
	for _, st := range w.kinds {
		keys, err := st.IndexKeys(cache.NamespaceIndex, ns)
		if err != nil {
			return 2 // unknown: no namespace-wide re-check
		}
		if n += len(keys); n > 1 {
			return n
		}
	}
	return n
}

// labelled are the locks of the machines and pools labelled with Cluster
// cluster's name, from the kinds' stores (safe from any goroutine).
func (w *watcher) labelled(ns, cluster string) []watchKey {
	var keys []watchKey
	for _, kind := range []object.Kind{object.TerraformMachine, object.TerraformMachinePool} {
		for _, o := range w.kinds[kind.Name].List() {
			if om, ok := o.(*metav1.PartialObjectMetadata); ok && om.Namespace == ns && om.Labels[jobgate.ClusterNameLabel] == cluster {
				r := object.Ref{Kind: kind, Namespace: om.Namespace, Name: om.Name}
				keys = append(keys, watchKey{om.Namespace, object.LockLeaseName(object.DefaultWorkspace, r.Suffix())})
			}
		}
	}
	return keys
}

// queueing is an informer handler that queues the keys of every change
// after the informer's own first list; that list is what the first
// report covers.
func queueing(q workqueue.TypedInterface[watchKey], keysOf func(obj any) []watchKey) cache.ResourceEventHandler {
	add := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		for _, k := range keysOf(obj) {
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
	r   *Reader
	ctx context.Context
	q   workqueue.TypedInterface[watchKey]
	// scope is the watch's.
	scope inspect.Scope
	// leases is the lease informer's store: a Lease not in it is gone, or
	// has left the selector.
	leases cache.Store
	// runners is the labelled pods' informer's store.
	runners cache.Store
	// jobs is the runner Jobs' informer's store.
	jobs cache.Indexer
	// fromStores: the Jobs' and the kinds' informers (followed) all
	// listed, so a changed lock is decided from the stores
	// (lockFromStores), while health says they are up.
	fromStores bool
	followed   []cache.SharedIndexInformer
	health     *health
	// full are the owners read in full by lockFromStores, by ref.
	full map[object.Ref]*unstructured.Unstructured
	// kinds are the kinds' informers' stores, by Kind name.
	kinds map[string]cache.Indexer
	// last is each lock's last result, by namespace/name.
	last map[string]inspect.Result
	// hostOf is the holder pod (namespace/name) each lock's last result
	// names, byHost the locks that name each.
	hostOf map[string]string
	byHost map[string]map[string]bool
	// tcOf is the TerraformCluster (namespace/name) each lock's owner
	// inherited from at its last read, or that its Cluster named and did
	// not exist, byTC the locks of each.
	tcOf map[string]string
	byTC map[string]map[string]bool
	// pods are the watches of single holder pods the labelled informer
	// does not follow, by namespace/name.
	pods    map[string]*podWatch
	changed func(inspect.Change) error
}

// remember keeps a lock's result, read in snap, and follows what it
// depends on beyond the informers: its holder pod when unlabelled, and
// the TerraformCluster its owner inherits from.
func (w *watcher) remember(r inspect.Result, snap *inspect.Snapshot) {
	l := r.Facts.Lease
	k := inspect.Key(l.Namespace, l.Name)
	w.last[k] = r
	host := ""
	if p := r.Facts.Pod; p != nil && p.Exists {
		host = inspect.Key(l.Namespace, p.Name)
	} else if l.Host != "" {
		host = inspect.Key(l.Namespace, l.Host)
	}
	before := w.hostOf[k]
	relink(w.hostOf, w.byHost, k, host)
	w.followPod(before)
	w.followPod(host)
	// The TerraformCluster the owner inherits from, or the one its
	// Cluster names that does not exist yet: its creation, labelled or
	// not, changes the verdict's reason.
	tc := ""
	if o := r.Facts.Owner; o != nil {
		switch c := snap.Clusters[o.Ref]; {
		case c.Object != nil:
			tc = inspect.Key(c.Object.GetNamespace(), c.Object.GetName())
		case c.Name != "":
			tc = inspect.Key(o.Ref.Namespace, c.Name)
		}
	}
	relink(w.tcOf, w.byTC, k, tc)
}

// forget drops a lock that is gone.
func (w *watcher) forget(k string) {
	delete(w.last, k)
	host := w.hostOf[k]
	relink(w.hostOf, w.byHost, k, "")
	relink(w.tcOf, w.byTC, k, "")
	w.followPod(host)
}

// relink points lock k at target ("" for none) in a one-to-many index.
func relink(of map[string]string, by map[string]map[string]bool, k, target string) {
	if old, ok := of[k]; ok {
		delete(by[old], k)
		if len(by[old]) == 0 {
			delete(by, old)
		}
		delete(of, k)
	}
	if target == "" {
		return
	}
	of[k] = target
	if by[target] == nil {
		by[target] = map[string]bool{}
	}
	by[target][k] = true
}

// maxPodWatches bounds the watches of single pods, as holderGets bounds
// Read's GETs of holder pods.
const maxPodWatches = holderGets

// podWatch is the watch of one pod by name.
type podWatch struct{ stop context.CancelFunc }

// followPod watches the holder pod key (namespace/name) by name while a
// lock's last result names it as existing and the labelled informer does
// not hold it, and stops watching it otherwise.
func (w *watcher) followPod(key string) {
	if key == "" {
		return
	}
	want := false
	if _, inStore, err := w.runners.GetByKey(key); err == nil && !inStore {
		for k := range w.byHost[key] {
			if p := w.last[k].Facts.Pod; p != nil && p.Exists {
				want = true
				break
			}
		}
	}
	pw, watching := w.pods[key]
	switch {
	case want && !watching && len(w.pods) >= maxPodWatches:
		// Past the bound a pod without CAPTF's label is not followed
		// (its lock is re-read on any other change of its inputs): the
		// requests must not grow with the locks.
	case want && !watching:
		w.pods[key] = w.watchPod(key)
	case !want && watching:
		pw.stop()
		delete(w.pods, key)
	}
}

// watchPod starts an informer on the one pod key names. Once it has
// listed, the pod's key is queued once: a change between the read that
// found the pod and that list is then not lost.
func (w *watcher) watchPod(key string) *podWatch {
	ns, name := splitKey(key)
	ctx, stop := context.WithCancel(w.ctx)
	f := informers.NewSharedInformerFactoryWithOptions(w.r.Client, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	inf := f.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(queueing(w.q, podKey)); err != nil {
		stop()
		return &podWatch{stop: stop}
	}
	go inf.Run(ctx.Done())
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			w.q.Add(watchKey{ns, podPrefix + name})
		}
	}()
	return &podWatch{stop: stop}
}

// stopPods ends every single-pod watch.
func (w *watcher) stopPods() {
	for _, pw := range w.pods {
		pw.stop()
	}
}

// recheck re-reads the locks a queued key names (a pod's: those it holds;
// a TerraformCluster's: those whose owners inherit from it; a Cluster's:
// those of the machines and pools labelled with its name) and reports
// each when what a reader sees changed; a lock that is gone (or has left
// the selector) is reported deleted.
func (w *watcher) recheck(ctx context.Context, ns, name string) error {
	var locks []string
	if pod, ok := strings.CutPrefix(name, podPrefix); ok {
		locks = sortedKeys(w.byHost[inspect.Key(ns, pod)])
	} else if tc, ok := strings.CutPrefix(name, tcPrefix); ok {
		locks = sortedKeys(w.byTC[inspect.Key(ns, tc)])
	} else if name == allLocks {
		return w.recheckAll(ctx)
	} else if name == namespacePrefix {
		for k, r := range w.last {
			if r.Facts.Lease.Namespace == ns {
				locks = append(locks, k)
			}
		}
		sort.Strings(locks)
	} else if cl, ok := strings.CutPrefix(name, clusterPrefix); ok {
		for _, k := range w.labelled(ns, cl) {
			locks = append(locks, inspect.Key(k.namespace, k.name))
		}
	} else {
		return w.recheckLock(ctx, ns, name)
	}
	for _, lk := range locks {
		lns, lname := splitKey(lk)
		if err := w.recheckLock(ctx, lns, lname); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (w *watcher) recheckLock(ctx context.Context, ns, name string) error {
	k := inspect.Key(ns, name)
	prev, known := w.last[k]
	_, present, err := w.leases.GetByKey(k)
	deleted := err == nil && !present
	var res inspect.Result
	var snap *inspect.Snapshot
	if !deleted {
		var err error
		if w.fromStores && w.health.up(w.followed) {
			snap, err = w.lockFromStores(ctx, ns, name)
		} else {
			snap, err = w.r.ReadLock(ctx, ns, name)
		}
		var none *inspect.NoLeaseError
		switch {
		case errors.As(err, &none):
			deleted = true
		case err != nil:
			return fmt.Errorf("re-reading %s/%s: %w", ns, name, err)
		default:
			res, _ = inspect.DecideLock(snap, ns, name)
		}
	}
	if deleted {
		if !known {
			return nil
		}
		w.forget(k)
		return w.changed(inspect.Change{Result: prev, Deleted: true})
	}
	return w.report(k, res, snap)
}

// report shows lock k's result, read in snap, if a reader would see a
// difference from what was shown.
func (w *watcher) report(k string, res inspect.Result, snap *inspect.Snapshot) error {
	if !w.scope.AllWorkspaces && res.Facts.Lease.Workspace != object.DefaultWorkspace {
		return nil
	}
	prev, known := w.last[k]
	w.remember(res, snap)
	if known && same(prev, res) {
		return nil
	}
	return w.changed(inspect.Change{Result: res})
}

// recheckAll reads the whole scope again, in one Read, and reports every
// lock that changed or is gone: what a watch does when one of its stores
// stopped following the cluster.
func (w *watcher) recheckAll(ctx context.Context) error {
	snap, err := w.r.Read(ctx, w.scope)
	if err != nil {
		return fmt.Errorf("re-reading the locks: %w", err)
	}
	rep := inspect.Decide(snap)
	seen := map[string]bool{}
	for _, res := range rep.Results {
		l := res.Facts.Lease
		k := inspect.Key(l.Namespace, l.Name)
		seen[k] = true
		if err := w.report(k, res, snap); err != nil {
			return err
		}
	}
	gone := make([]string, 0)
	for k := range w.last {
		if !seen[k] {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	for _, k := range gone {
		prev := w.last[k]
		w.forget(k)
		if err := w.changed(inspect.Change{Result: prev, Deleted: true}); err != nil {
			return err
		}
	}
	return nil
}

// same is true when a reader would see no difference: the verdict, its
// reason, the holder, the active Job and the object's Cluster API Cluster
// (the CLUSTER column, which --capi-cluster selects on).
func same(a, b inspect.Result) bool {
	return a.Decision.Verdict == b.Decision.Verdict && a.Decision.Reason == b.Decision.Reason &&
		a.Facts.Lease.ID == b.Facts.Lease.ID && a.Facts.Lease.Held == b.Facts.Lease.Held && a.ActiveJobName() == b.ActiveJobName() &&
		clusterOfResult(a) == clusterOfResult(b)
}

// clusterOfResult is the Cluster API Cluster of r's object, "" for none.
func clusterOfResult(r inspect.Result) string {
	if r.Facts.Owner == nil {
		return ""
	}
	return r.Facts.Owner.Cluster
}
