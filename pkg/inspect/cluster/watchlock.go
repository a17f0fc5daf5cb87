package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// A watch decides a changed lock from what its informers already hold:
// the Lease, the namespace's CAPTF objects (metadata), its runner Jobs and
// the labelled runner pods. ReadLock would list the namespace's three
// kinds and its Jobs again for every change, which on a namespace of
// thousands of objects costs a full read of them per pod phase or Job
// status change. Only what no informer holds is read live: the owner in
// full, when a read keeps it (inspect.KeepInFull), and only when its
// resourceVersion moved since the last read; the holder pod by name when
// it is not a labelled one; and the gates' surroundings (readEnv), as
// ReadLock reads them.

// lockFromStores is ReadLock's snapshot of one lock, built from the
// watch's stores. It returns an *inspect.NoLeaseError when the Lease is
// not in the store.
func (w *watcher) lockFromStores(ctx context.Context, ns, name string) (*inspect.Snapshot, error) {
	k := inspect.Key(ns, name)
	obj, ok, err := w.leases.GetByKey(k)
	lease, isLease := obj.(*coordinationv1.Lease)
	if err != nil || !ok || !isLease {
		return nil, &inspect.NoLeaseError{Namespace: ns, Name: name}
	}
	l := inspect.ParseLease(lease)
	snap := &inspect.Snapshot{Leases: []inspect.Lease{l}, Sources: map[string]*coordinationv1.Lease{k: lease},
		Kinds: map[string]inspect.KindList{}, Objects: map[object.Ref]*unstructured.Unstructured{}, Pods: map[string]*inspect.Pod{}}
	ownerKey, held, owned := inspect.OwnerKey(l)
	for _, kind := range object.Kinds {
		kl := inspect.NewKindList(kind)
		items, err := w.kinds[kind.Name].ByIndex(cache.NamespaceIndex, ns)
		if err != nil {
			return nil, err
		}
		for _, o := range items {
			m, ok := o.(*metav1.PartialObjectMetadata)
			if !ok {
				continue
			}
			ref := object.Ref{Kind: kind, Namespace: m.Namespace, Name: m.Name}
			deleting := m.DeletionTimestamp != nil
			kl.Objects[ref] = inspect.ObjectMeta{UID: m.UID, Deleting: deleting, ClusterLabel: m.Labels[jobgate.ClusterNameLabel], OwnerCluster: inspect.ClusterOwner(m.OwnerReferences)}
			if owned && ns+"/"+ref.Suffix() == ownerKey && inspect.KeepInFull(held, deleting) {
				u, err := w.owner(ctx, ref, m.ResourceVersion)
				switch {
				case err != nil:
					kl.Err = readError("get", kind.Resource+"."+object.Group, ns, err)
					snap.Warnings = append(snap.Warnings, kl.Err.Error()+"; its objects are shown as unreadable")
				case u == nil: // deleted since the store saw it
					delete(kl.Objects, ref)
				default:
					snap.Objects[ref] = u
				}
			}
		}
		snap.Kinds[kind.Name] = kl
	}
	jobs, err := w.jobs.ByIndex(cache.NamespaceIndex, ns)
	if err != nil {
		return nil, err
	}
	for _, o := range jobs {
		if j, ok := o.(*batchv1.Job); ok {
			snap.Jobs = append(snap.Jobs, j)
		}
	}
	// In the order a list returns them (by name), which the active Job's
	// choice between two of one creation time follows.
	slices.SortFunc(snap.Jobs, func(a, b *batchv1.Job) int { return strings.Compare(a.Name, b.Name) })
	if host, ok := inspect.HolderPod(l); ok {
		if o, inStore, err := w.runners.GetByKey(inspect.Key(ns, host)); err == nil && inStore {
			snap.Pods[inspect.Key(ns, host)] = inspect.PodFact(o.(*corev1.Pod))
		} else if err := w.r.readHost(ctx, snap, l); err != nil {
			return nil, err
		}
	}
	w.r.readEnv(ctx, ns, snap)
	return snap, nil
}

// owner is an object in full, as a read keeps it: the copy read before
// when its resourceVersion is still rv, else read by name; nil when it no
// longer exists.
func (w *watcher) owner(ctx context.Context, ref object.Ref, rv string) (*unstructured.Unstructured, error) {
	if u, ok := w.full[ref]; ok && u.GetResourceVersion() == rv {
		return u, nil
	}
	u, err := w.r.Dynamic.Resource(ref.Kind.GVR()).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if notFoundObject(err, ref.Name) {
		delete(w.full, ref)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	w.full[ref] = u
	return u, nil
}
