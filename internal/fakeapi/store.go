package fakeapi

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
)

// store is the server's storage: client-go's ObjectTracker, plus what an
// API server does and the tracker does not: a resourceVersion on every
// write, from one counter as etcd's revision; optimistic concurrency (an
// update or patch whose resourceVersion is not the stored one is a
// Conflict); label and field selectors and pages in lists; and watches
// that start at a resourceVersion, so that an informer's list then watch
// misses nothing. Every write is kept in a log that watches replay; the
// tracker's own watchers are not used, since they cannot start at a
// resourceVersion and panic when a hundred events wait unread.
type store struct {
	inner  k8stesting.ObjectTracker
	scheme *runtime.Scheme
	codecs serializer.CodecFactory
	// resourceOf and kindOf map the served kinds and resources to each
	// other; a kind not served is given the resource the tracker guesses.
	resourceOf map[schema.GroupVersionKind]schema.GroupVersionResource
	kindOf     map[schema.GroupVersionResource]schema.GroupVersionKind

	// mu orders writes: each takes the next resourceVersion and appends
	// to log while held. Lists hold it shared, so that the version they
	// give matches what they list.
	mu  sync.RWMutex
	rv  uint64
	log []event
	// wake is closed, and replaced, on every write, to wake the watches.
	wake chan struct{}
}

var _ k8stesting.ObjectTracker = (*store)(nil)

// event is one write, as watches see it.
type event struct {
	rv   uint64
	gvr  schema.GroupVersionResource
	ns   string
	typ  watch.EventType
	obj  runtime.Object // the object written; for a deletion, its last state
	prev runtime.Object // for a modification, the state before it
}

func newStore(scheme *runtime.Scheme, codecs serializer.CodecFactory, served []resource) *store {
	t := &store{
		inner: k8stesting.NewObjectTracker(scheme, codecs.UniversalDecoder()), scheme: scheme, codecs: codecs,
		resourceOf: map[schema.GroupVersionKind]schema.GroupVersionResource{},
		kindOf:     map[schema.GroupVersionResource]schema.GroupVersionKind{},
		wake:       make(chan struct{}),
	}
	for _, r := range served {
		t.resourceOf[r.gvk()], t.kindOf[r.gvr] = r.gvr, r.gvk()
	}
	return t
}

// typed says whether objects of kind gvk are stored as their Go type (a
// built-in kind) rather than unstructured (a custom resource).
func (t *store) typed(gvk schema.GroupVersionKind) bool {
	obj, err := t.scheme.New(gvk)
	if err != nil {
		return false
	}
	_, u := obj.(runtime.Unstructured)
	return !u
}

// normalize returns a copy of obj as the store keeps it: a built-in kind
// as its Go type, a custom resource as unstructured, whichever the caller
// gave (PartialObjectMetadata included), and the object's kind.
func (t *store) normalize(obj runtime.Object) (runtime.Object, schema.GroupVersionKind, error) {
	var gvk schema.GroupVersionKind
	switch o := obj.(type) {
	case *metav1.PartialObjectMetadata:
		gvk = o.GroupVersionKind()
	case *unstructured.Unstructured:
		gvk = o.GroupVersionKind()
		if !t.typed(gvk) {
			return o.DeepCopy(), gvk, nil
		}
	default:
		gvks, _, err := t.scheme.ObjectKinds(obj)
		if err != nil {
			return nil, gvk, err
		}
		return obj.DeepCopyObject(), gvks[0], nil
	}
	if gvk.Kind == "" || gvk.Version == "" {
		return nil, gvk, fmt.Errorf("fakeapi: %T has no apiVersion or kind", obj)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, gvk, err
	}
	if !t.typed(gvk) {
		u := &unstructured.Unstructured{}
		return u, gvk, u.UnmarshalJSON(b)
	}
	out, _, err := t.codecs.UniversalDeserializer().Decode(b, &gvk, nil)
	return out, gvk, err
}

func (t *store) resourceFor(gvk schema.GroupVersionKind) schema.GroupVersionResource {
	if gvr, ok := t.resourceOf[gvk]; ok {
		return gvr
	}
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	return gvr
}

// commit records a write at resourceVersion rv; mu is held.
func (t *store) commit(rv uint64, gvr schema.GroupVersionResource, ns string, typ watch.EventType, obj, prev runtime.Object) {
	t.rv = rv
	t.log = append(t.log, event{rv: rv, gvr: gvr, ns: ns, typ: typ, obj: obj, prev: prev})
	close(t.wake)
	t.wake = make(chan struct{})
}

// Add adds obj (or a list's items) as a test's fixture: it keeps the
// resourceVersion obj has (the counter moves past a numeric one), and
// gives one to an object without.
func (t *store) Add(obj runtime.Object) error {
	if meta.IsListType(obj) {
		items, err := meta.ExtractList(obj)
		if err != nil {
			return err
		}
		for _, item := range items {
			if err := t.Add(item); err != nil {
				return err
			}
		}
		return nil
	}
	obj, gvk, err := t.normalize(obj)
	if err != nil {
		return err
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	gvr := t.resourceFor(gvk)
	t.mu.Lock()
	defer t.mu.Unlock()
	next := t.rv + 1
	if rv := acc.GetResourceVersion(); rv == "" {
		acc.SetResourceVersion(strconv.FormatUint(next, 10))
	} else if n, err := strconv.ParseUint(rv, 10, 64); err == nil && n >= next {
		next = n + 1
	}
	if err := t.inner.Create(gvr, obj, acc.GetNamespace()); err != nil {
		return err
	}
	t.commit(next, gvr, acc.GetNamespace(), watch.Added, obj, nil)
	return nil
}

// Create adds obj with the next resourceVersion.
func (t *store) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, _ ...metav1.CreateOptions) error {
	obj, _, err := t.normalize(obj)
	if err != nil {
		return err
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	if acc.GetNamespace() == "" {
		acc.SetNamespace(ns)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	next := t.rv + 1
	acc.SetResourceVersion(strconv.FormatUint(next, 10))
	if err := t.inner.Create(gvr, obj, ns); err != nil {
		return err
	}
	t.commit(next, gvr, ns, watch.Added, obj, nil)
	return nil
}

// Update replaces the stored object, as a PUT does: a Conflict when obj
// has a resourceVersion that is not the stored one, NotFound when there
// is none.
func (t *store) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, _ ...metav1.UpdateOptions) error {
	return t.replace(gvr, obj, ns)
}

// Patch stores a patched object, as Update does: a patch computed from a
// state that changed since is a Conflict.
func (t *store) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, _ ...metav1.PatchOptions) error {
	return t.replace(gvr, obj, ns)
}

// errModified is the API server's message for a stale resourceVersion.
var errModified = errors.New("the object has been modified; please apply your changes to the latest version and try again")

func (t *store) replace(gvr schema.GroupVersionResource, obj runtime.Object, ns string) error {
	obj, _, err := t.normalize(obj)
	if err != nil {
		return err
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	if acc.GetNamespace() == "" {
		acc.SetNamespace(ns)
	}
	if acc.GetNamespace() != ns {
		return apierrors.NewBadRequest(fmt.Sprintf("the namespace of the object (%s) does not match the namespace on the request (%s)", acc.GetNamespace(), ns))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	prev, err := t.inner.Get(gvr, acc.GetNamespace(), acc.GetName())
	if err != nil {
		return err
	}
	old, err := meta.Accessor(prev)
	if err != nil {
		return err
	}
	if rv := acc.GetResourceVersion(); rv != "" && rv != old.GetResourceVersion() {
		return apierrors.NewConflict(gvr.GroupResource(), acc.GetName(), errModified)
	}
	next := t.rv + 1
	acc.SetResourceVersion(strconv.FormatUint(next, 10))
	if err := t.inner.Update(gvr, obj, ns); err != nil {
		return err
	}
	t.commit(next, gvr, acc.GetNamespace(), watch.Modified, obj, prev)
	return nil
}

// Delete removes the object, checking the options' preconditions; the
// deletion's watch event carries its last state at a new resourceVersion.
func (t *store) Delete(gvr schema.GroupVersionResource, ns, name string, opts ...metav1.DeleteOptions) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	obj, err := t.inner.Get(gvr, ns, name)
	if err != nil {
		return err
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	for _, o := range opts {
		p := o.Preconditions
		if p == nil {
			continue
		}
		if p.UID != nil && *p.UID != acc.GetUID() {
			return apierrors.NewConflict(gvr.GroupResource(), name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, acc.GetUID()))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != acc.GetResourceVersion() {
			return apierrors.NewConflict(gvr.GroupResource(), name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, acc.GetResourceVersion()))
		}
	}
	if err := t.inner.Delete(gvr, ns, name); err != nil {
		return err
	}
	next := t.rv + 1
	acc.SetResourceVersion(strconv.FormatUint(next, 10))
	t.commit(next, gvr, ns, watch.Deleted, obj, nil)
	return nil
}

// Apply is not supported: server-side apply needs the field manager.
func (t *store) Apply(gvr schema.GroupVersionResource, _ runtime.Object, _ string, _ ...metav1.PatchOptions) error {
	return apierrors.NewMethodNotSupported(gvr.GroupResource(), "apply")
}

func (t *store) Get(gvr schema.GroupVersionResource, ns, name string, _ ...metav1.GetOptions) (runtime.Object, error) {
	return t.inner.Get(gvr, ns, name)
}

// List lists the objects of kind gvk in ns ("" for all namespaces), with
// the options' label and field selectors and page (limit and continue),
// and the resourceVersion of the store in the list's metadata.
func (t *store) List(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, ns string, opts ...metav1.ListOptions) (runtime.Object, error) {
	var o metav1.ListOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	match, err := matcher(gvr, o)
	if err != nil {
		return nil, err
	}
	var from *continueToken
	if o.Continue != "" {
		if from, err = parseContinue(o.Continue); err != nil {
			return nil, err
		}
	}
	t.mu.RLock()
	list, err := t.inner.List(gvr, gvk, ns)
	rv := t.rv
	t.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	if from != nil {
		rv = from.RV
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	kept := items[:0]
	for _, item := range items {
		acc, err := meta.Accessor(item)
		if err != nil {
			return nil, err
		}
		if match(item) && (from == nil || after(acc, from)) {
			kept = append(kept, item)
		}
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	if o.Limit > 0 && int64(len(kept)) > o.Limit {
		last, _ := meta.Accessor(kept[o.Limit-1])
		rest := int64(len(kept)) - o.Limit
		lm.SetContinue((&continueToken{RV: rv, Namespace: last.GetNamespace(), Name: last.GetName()}).String())
		lm.SetRemainingItemCount(&rest)
		kept = kept[:o.Limit]
	}
	if err := meta.SetList(list, kept); err != nil {
		return nil, err
	}
	lm.SetResourceVersion(strconv.FormatUint(rv, 10))
	if u, ok := list.(*unstructured.UnstructuredList); ok {
		u.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	}
	return list, nil
}

// continueToken is where a page ends: the list's resourceVersion and the
// last item's key. The next page starts after that key, in the store's
// state of then (not of the token's version, which this store does not
// keep).
type continueToken struct {
	RV        uint64 `json:"rv"`
	Namespace string `json:"ns"`
	Name      string `json:"name"`
}

func (c *continueToken) String() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func parseContinue(s string) (*continueToken, error) {
	var c continueToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		return nil, apierrors.NewBadRequest("continue key is not valid: " + err.Error())
	}
	return &c, nil
}

// after says whether an object comes after the token's in the tracker's
// order: by namespace, then name.
func after(acc metav1.Object, c *continueToken) bool {
	if acc.GetNamespace() != c.Namespace {
		return acc.GetNamespace() > c.Namespace
	}
	return acc.GetName() > c.Name
}

// matcher is the options' label and field selectors. The fields are those
// every resource has, metadata.name and metadata.namespace, and for Events
// those the API server selects them by (pkg/registry/core/event/strategy.go
// ToSelectableFields, and pkg/apis/events/v1/conversion.go for the
// regarding.* names of events.k8s.io/v1); the API server refuses a field
// it does not know, and so does this.
func matcher(gvr schema.GroupVersionResource, o metav1.ListOptions) (func(runtime.Object) bool, error) {
	ls, err := labels.Parse(o.LabelSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	fs, err := fields.ParseSelector(o.FieldSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	known := selectable(gvr, nil)
	for _, r := range fs.Requirements() {
		if _, ok := known[r.Field]; !ok {
			return nil, apierrors.NewBadRequest("field label not supported: " + r.Field)
		}
	}
	return func(obj runtime.Object) bool {
		acc, err := meta.Accessor(obj)
		return err == nil && ls.Matches(labels.Set(acc.GetLabels())) && fs.Matches(selectable(gvr, obj))
	}, nil
}

// selectable is the field set of obj, a gvr (nil: the field names alone).
func selectable(gvr schema.GroupVersionResource, obj runtime.Object) fields.Set {
	set := fields.Set{"metadata.name": "", "metadata.namespace": ""}
	if acc, err := meta.Accessor(obj); obj != nil && err == nil {
		set["metadata.name"], set["metadata.namespace"] = acc.GetName(), acc.GetNamespace()
	}
	if gvr.Resource != "events" {
		return set
	}
	var about corev1.ObjectReference
	var reason, typ string
	switch ev := obj.(type) {
	case *corev1.Event:
		about, reason, typ = ev.InvolvedObject, ev.Reason, ev.Type
	case *eventsv1.Event:
		about, reason, typ = ev.Regarding, ev.Reason, ev.Type
	}
	prefix := "involvedObject."
	if gvr.Group == eventsv1.GroupName {
		prefix = "regarding."
	}
	set[prefix+"kind"], set[prefix+"name"], set[prefix+"namespace"], set[prefix+"uid"] = about.Kind, about.Name, about.Namespace, string(about.UID)
	set["reason"], set["type"] = reason, typ
	return set
}

// Watch follows the writes of a resource as watch events, from the
// options' resourceVersion, as the HTTP watch does.
func (t *store) Watch(gvr schema.GroupVersionResource, ns string, opts ...metav1.ListOptions) (watch.Interface, error) {
	var o metav1.ListOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	w, err := t.startWatch(gvr, ns, o)
	if err != nil {
		return nil, err
	}
	ch := make(chan watch.Event)
	pw := watch.NewProxyWatcher(ch)
	go func() {
		defer close(ch)
		_ = w.run(pw.StopChan(), func(e watch.Event) error {
			select {
			case ch <- e:
				return nil
			case <-pw.StopChan():
				return errStopped
			}
		})
	}()
	return pw, nil
}

var errStopped = errors.New("watch stopped")

// watcher is one watch, started: the initial events it sends first, then
// the log from pos.
type watcher struct {
	t       *store
	gvr     schema.GroupVersionResource
	ns      string
	match   func(runtime.Object) bool
	initial []watch.Event
	pos     int
}

// startWatch starts a watch as the API server does. Without a
// resourceVersion, or with "0", it first sends the present objects as
// ADDED; with one, the writes after it. sendInitialEvents=true (a watch
// list, as client-go's informers do with the WatchListClient feature)
// sends the present objects, then a BOOKMARK annotated
// k8s.io/initial-events-end.
func (t *store) startWatch(gvr schema.GroupVersionResource, ns string, o metav1.ListOptions) (*watcher, error) {
	match, err := matcher(gvr, o)
	if err != nil {
		return nil, err
	}
	w := &watcher{t: t, gvr: gvr, ns: ns, match: match}
	initial := o.ResourceVersion == "" || o.ResourceVersion == "0"
	if o.SendInitialEvents != nil {
		initial = *o.SendInitialEvents
	}
	from := uint64(0)
	if !initial && o.ResourceVersion != "" && o.ResourceVersion != "0" {
		if from, err = strconv.ParseUint(o.ResourceVersion, 10, 64); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q", o.ResourceVersion))
		}
	}
	gvk, ok := t.kindOf[gvr]
	t.mu.RLock()
	defer t.mu.RUnlock()
	if !initial {
		if o.ResourceVersion == "" || o.ResourceVersion == "0" {
			from = t.rv
		}
		w.pos = sort.Search(len(t.log), func(i int) bool { return t.log[i].rv > from })
		return w, nil
	}
	if !ok {
		return nil, fmt.Errorf("fakeapi: no kind known for %v", gvr)
	}
	list, err := t.inner.List(gvr, gvk, ns)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		if match(item) {
			w.initial = append(w.initial, watch.Event{Type: watch.Added, Object: item})
		}
	}
	if o.SendInitialEvents != nil && *o.SendInitialEvents {
		mark, err := t.scheme.New(gvk)
		if err != nil {
			return nil, err
		}
		if u, ok := mark.(*unstructured.Unstructured); ok {
			u.SetGroupVersionKind(gvk)
		}
		acc, err := meta.Accessor(mark)
		if err != nil {
			return nil, err
		}
		acc.SetResourceVersion(strconv.FormatUint(t.rv, 10))
		acc.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		w.initial = append(w.initial, watch.Event{Type: watch.Bookmark, Object: mark})
	}
	w.pos = len(t.log)
	return w, nil
}

// run sends the watch's events until done is closed or send fails. An
// object that starts or stops matching the selectors is ADDED or DELETED,
// as the API server sends it. Each object sent is the watch's own copy.
func (w *watcher) run(done <-chan struct{}, send func(watch.Event) error) error {
	for _, e := range w.initial {
		if err := send(e); err != nil {
			return err
		}
	}
	for {
		w.t.mu.RLock()
		events, wake := w.t.log[w.pos:], w.t.wake
		w.t.mu.RUnlock()
		w.pos += len(events)
		for _, e := range events {
			select {
			case <-done:
				return nil
			default:
			}
			if e.gvr != w.gvr || w.ns != "" && e.ns != w.ns {
				continue
			}
			typ, now, was := e.typ, w.match(e.obj), e.prev != nil && w.match(e.prev)
			switch {
			case e.typ == watch.Modified && now && !was:
				typ = watch.Added
			case e.typ == watch.Modified && !now && was:
				typ = watch.Deleted
			case !now:
				continue
			}
			if err := send(watch.Event{Type: typ, Object: e.obj.DeepCopyObject()}); err != nil {
				return err
			}
		}
		if len(events) == 0 {
			select {
			case <-wake:
			case <-done:
				return nil
			}
		}
	}
}
