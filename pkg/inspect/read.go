package inspect

import (
	"context"
	"encoding/json"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/pager"

	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
)

// DefaultPageSize is the number of items of each list page: none, one
// unpaged list. The stream reads a list of any size in constant memory, so
// pages would only save the server work, and they cost it more: measured
// on the benchmark's cluster (docs/benchmarks.md), pages of 500 (kubectl's
// chunk size) took up to 3.5 times as long as one list, since the API
// server answers a list without a continue token from its watch cache.
const DefaultPageSize = -1

// each lists through client-go's pager: the path of clients that cannot
// stream (the fake clientsets of the unit tests, and the metadata client).
func (i *Inspector) each(ctx context.Context, list func(context.Context, metav1.ListOptions) (runtime.Object, error), opts metav1.ListOptions, fn func(runtime.Object) error) error {
	p := pager.New(pager.ListPageFunc(list))
	p.PageSize = max(i.pageSize(), 0)
	return p.EachListItem(ctx, opts, fn)
}

// pageSize is PageSize, DefaultPageSize when 0; negative means one
// unpaged list.
func (i *Inspector) pageSize() int64 {
	if i.PageSize != 0 {
		return i.PageSize
	}
	return DefaultPageSize
}

// restClient is the typed client's REST client, which asks for protobuf:
// every list streams through it. It is nil for a fake clientset, whose
// lists go through the typed client instead.
func (i *Inspector) restClient() rest.Interface {
	if rc, ok := i.Client.CoreV1().RESTClient().(*rest.RESTClient); ok && rc != nil {
		return rc
	}
	return nil
}

// protoObject is a built-in type's object, which decodes from protobuf.
type protoObject[T any] interface {
	*T
	runtime.Object
	Unmarshal([]byte) error
}

// eachTyped lists a built-in resource, handing each item to fn, decoded
// into a fresh object of its own, without its managedFields. fallback is the typed client's List, for
// a client that cannot stream. named, when not nil, picks the items worth
// decoding by name: a protobuf item whose name it refuses is skipped
// undecoded (half the Leases of a CAPTF cluster are its captf-run ones);
// fn must still check the name, as the other paths hand it every item.
func eachTyped[T any, P protoObject[T]](ctx context.Context, i *Inspector, p listPath, selector string, named func(string) bool, restart func(),
	fallback func(context.Context, metav1.ListOptions) (runtime.Object, error), fn func(P) error) error {
	rc := i.restClient()
	if rc == nil {
		return i.each(ctx, fallback, metav1.ListOptions{LabelSelector: selector}, func(o runtime.Object) error { return fn(o.(P)) })
	}
	var scratch []byte
	return i.stream(ctx, rc, p, selector, restart, func(b []byte, proto bool) error {
		if proto && named != nil {
			if name, ok := protoName(b); ok && !named(name) {
				return nil
			}
		}
		obj := P(new(T))
		var err error
		if proto {
			if scratch, err = withoutManagedFields(b, scratch); err == nil {
				err = obj.Unmarshal(scratch)
			}
		} else {
			err = json.Unmarshal(b, obj)
		}
		if err != nil {
			return fmt.Errorf("decoding a %s list item: %w", p.resource, err)
		}
		return fn(obj)
	})
}

// listLeases returns the lock Leases in scope, parsed, calling found for
// each as it is read, so that the lists it calls for start at once.
func (i *Inspector) listLeases(ctx context.Context, s Scope, found func(Lease)) ([]Lease, error) {
	var out []Lease
	leases := i.Client.CoordinationV1().Leases(s.Namespace)
	err := eachTyped(ctx, i, listPath{"/apis/coordination.k8s.io/v1", "leases", s.Namespace}, s.Selector, IsLockLease,
		func() { out = out[:0] },
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return leases.List(ctx, o) },
		func(l *coordinationv1.Lease) error {
			if !IsLockLease(l.Name) {
				return nil
			}
			if p := ParseLease(l); s.AllWorkspaces || p.Workspace == object.DefaultWorkspace {
				out = append(out, p)
				found(p)
			}
			return nil
		})
	if err != nil {
		return nil, readError("list", "leases", s.Namespace, err)
	}
	return out, nil
}

// kindList is what listing one CAPTF kind gave.
type kindList struct {
	kind object.Kind
	// served is false when the API server does not serve the kind (its CRD
	// is not installed).
	served bool
	// err is set when the list failed otherwise (RBAC, most often).
	err   error
	names []object.Ref
	uids  map[object.Ref]types.UID
	// deleting are the objects with a deletionTimestamp.
	deleting map[object.Ref]bool
	// objects are those a full list was asked to keep in full, for their
	// gates.
	objects map[object.Ref]*unstructured.Unstructured
}

func newKindList(k object.Kind) kindList {
	return kindList{kind: k, served: true, uids: map[object.Ref]types.UID{}, deleting: map[object.Ref]bool{}, objects: map[object.Ref]*unstructured.Unstructured{}}
}

func (r *kindList) add(m itemMeta) object.Ref {
	ref := object.Ref{Kind: r.kind, Namespace: m.namespace, Name: m.name}
	r.names = append(r.names, ref)
	r.uids[ref] = m.uid
	if m.deleting {
		r.deleting[ref] = true
	}
	return ref
}

// done records how the list ended.
func (r *kindList) done(err error, namespace string) {
	switch {
	case apierrors.IsNotFound(err):
		r.served = false
	case err != nil:
		r.err = readError("list", r.kind.Resource+"."+object.Group, namespace, err)
	}
}

// listObjects lists one CAPTF kind's objects, metadata only.
func (i *Inspector) listObjects(ctx context.Context, k object.Kind, namespace string) kindList {
	r := newKindList(k)
	res := i.Metadata.Resource(k.GVR()).Namespace(namespace)
	err := i.each(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return res.List(ctx, o)
	}, metav1.ListOptions{}, func(o runtime.Object) error {
		m := o.(*metav1.PartialObjectMetadata)
		r.add(itemMeta{namespace: m.Namespace, name: m.Name, uid: m.UID, deleting: m.DeletionTimestamp != nil})
		return nil
	})
	r.done(err, namespace)
	return r
}

// listObjectsFull lists one CAPTF kind's objects in full, once, in place
// of both the metadata list and the reads of the owners whose gates are
// needed: it keeps the names as listObjects does, and keeps in full the
// objects want asks for as each arrives. Only those are decoded beyond
// their metadata.
func (i *Inspector) listObjectsFull(ctx context.Context, k object.Kind, namespace string, want *gateWant) kindList {
	r := newKindList(k)
	keep := func(ref object.Ref, deleting bool, u func() (*unstructured.Unstructured, error)) error {
		if ok, err := want.wants(ctx, ref.Namespace+"/"+ref.Suffix(), deleting); err != nil || !ok {
			return err
		}
		obj, err := u()
		if err != nil {
			return err
		}
		r.objects[ref] = obj
		return nil
	}
	var err error
	if rc := i.restClient(); rc != nil {
		gvr := k.GVR()
		err = i.stream(ctx, rc, listPath{"/apis/" + gvr.Group + "/" + gvr.Version, gvr.Resource, namespace}, "",
			func() { r = newKindList(k) },
			func(b []byte, _ bool) error {
				m, err := jsonMeta(b)
				if err != nil {
					return err
				}
				ref := r.add(m)
				return keep(ref, m.deleting, func() (*unstructured.Unstructured, error) {
					u := &unstructured.Unstructured{}
					return u, u.UnmarshalJSON(b)
				})
			})
	} else {
		res := i.Dynamic.Resource(k.GVR()).Namespace(namespace)
		err = i.each(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return res.List(ctx, o)
		}, metav1.ListOptions{}, func(o runtime.Object) error {
			u := o.(*unstructured.Unstructured)
			ref := r.add(itemMeta{namespace: u.GetNamespace(), name: u.GetName(), uid: u.GetUID(), deleting: u.GetDeletionTimestamp() != nil})
			return keep(ref, u.GetDeletionTimestamp() != nil, func() (*unstructured.Unstructured, error) { return u, nil })
		})
	}
	r.done(err, namespace)
	return r
}

// listJobs returns CAPTF's runner Jobs in scope, with what Death and
// ActiveJob read of them: metadata (labels and owner references) and
// status. It selects captf.io/managed=true, as CAPTF's Job cache does
// (internal/manager/cache.go jobSelector, at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517: owner-kind label present and
// captf.io/managed=true): a Job without it is never one CAPTF counts.
func (i *Inspector) listJobs(ctx context.Context, namespace string) ([]*batchv1.Job, error) {
	var out []*batchv1.Job
	jobs := i.Client.BatchV1().Jobs(namespace)
	err := eachTyped(ctx, i, listPath{"/apis/batch/v1", "jobs", namespace}, LabelManaged+"=true", nil,
		func() { out = out[:0] },
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return jobs.List(ctx, o) },
		func(j *batchv1.Job) error {
			j.ManagedFields, j.Spec = nil, batchv1.JobSpec{}
			out = append(out, j)
			return nil
		})
	if err != nil {
		return nil, readError("list", "jobs.batch", namespace, err)
	}
	return out, nil
}

// podEntry is what a pod list keeps of one pod.
type podEntry struct {
	pod *Pod
	// managed is whether the pod carries CAPTF's label, that is whether
	// the labelled list of runner pods returns it.
	managed bool
}

// listPods returns the pods in scope that match selector, by
// namespace/name. Of an unfiltered list it keeps only the pods CAPTF
// labels and those named as its runner pods are: no other pod can be a
// holder whose verdict depends on it.
func (i *Inspector) listPods(ctx context.Context, namespace, selector string) (map[string]podEntry, error) {
	out := map[string]podEntry{}
	pods := i.Client.CoreV1().Pods(namespace)
	err := eachTyped(ctx, i, listPath{"/api/v1", "pods", namespace}, selector, nil,
		func() { clear(out) },
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) },
		func(p *corev1.Pod) error {
			managed := p.Labels[LabelManaged] == "true"
			if _, err := runner.ParsePodName(p.Name); managed || err == nil {
				out[p.Namespace+"/"+p.Name] = podEntry{pod: podFact(p), managed: managed}
			}
			return nil
		})
	if err != nil {
		return nil, readError("list", "pods", namespace, err)
	}
	return out, nil
}

// getPod reads one pod by name, as the controller does; NotFound is an
// answer (the pod is gone), any other failure is an error. A host that
// cannot be a pod name (whoever holds the lock writes it) names no pod and
// is never sent to the server as a path: neither one client-go refuses
// ("/", "%"), which fails CAPTF's GET (Classify, RefusedName), nor one it
// sends (upper case, "_"), which the API server answers NotFound, as a
// request for it would tell nothing and a name from the holder is never
// put into a request.
func (i *Inspector) getPod(ctx context.Context, namespace, name string) (*Pod, error) {
	if !validName(name) {
		return missingPod(name), nil
	}
	p, err := i.Client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return missingPod(name), nil
	}
	if err != nil {
		return nil, readError("get", "pods", namespace, err)
	}
	return podFact(p), nil
}

// missingPod is a pod that is not there, marked Invalid when no pod can
// ever have that name.
func missingPod(name string) *Pod {
	return &Pod{Name: name, Invalid: !validName(name)}
}

// podFact keeps what the verdict and the death evidence read of a pod: of
// a finished pod's status, its reason, message and each container's
// termination; nothing of a running one's.
func podFact(p *corev1.Pod) *Pod {
	f := &Pod{Name: p.Name, Exists: true, Phase: p.Status.Phase, Terminating: p.DeletionTimestamp != nil, Node: p.Spec.NodeName}
	if f.Phase != corev1.PodSucceeded && f.Phase != corev1.PodFailed {
		return f
	}
	s := &corev1.PodStatus{Phase: p.Status.Phase, Reason: p.Status.Reason, Message: p.Status.Message}
	for _, c := range p.Status.ContainerStatuses {
		s.ContainerStatuses = append(s.ContainerStatuses, corev1.ContainerStatus{
			Name:                 c.Name,
			State:                corev1.ContainerState{Terminated: c.State.Terminated},
			LastTerminationState: corev1.ContainerState{Terminated: c.LastTerminationState.Terminated},
		})
	}
	f.Status = s
	return f
}

// readError says which read failed and keeps the server's own message,
// which names the user, verb, resource and namespace of a 403.
func readError(verb, resource, namespace string, err error) error {
	where := "in all namespaces"
	if namespace != "" {
		where = fmt.Sprintf("in namespace %q", namespace)
	}
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("cannot %s %s %s: you must be logged in to the server (%w)", verb, resource, where, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("cannot %s %s %s (the plugin needs %s on %s): %w", verb, resource, where, verb, resource, err)
	}
	return fmt.Errorf("cannot %s %s %s: %w", verb, resource, where, err)
}
