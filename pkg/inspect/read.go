package inspect

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/pager"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// DefaultPageSize is kubectl's chunk size.
const DefaultPageSize = 500

// each lists through client-go's pager, page by page, so a large list
// never has to be held twice and an expired continue token falls back to a
// full list as kubectl does.
func (i *Inspector) each(ctx context.Context, list func(context.Context, metav1.ListOptions) (runtime.Object, error), opts metav1.ListOptions, fn func(runtime.Object) error) error {
	p := pager.New(pager.ListPageFunc(list))
	p.PageSize = i.pageSize()
	return p.EachListItem(ctx, opts, fn)
}

func (i *Inspector) pageSize() int64 {
	if i.PageSize > 0 {
		return i.PageSize
	}
	return DefaultPageSize
}

// listLeases returns the lock Leases in scope.
func (i *Inspector) listLeases(ctx context.Context, s Scope) ([]*coordinationv1.Lease, error) {
	var out []*coordinationv1.Lease
	leases := i.Client.CoordinationV1().Leases(s.Namespace)
	err := i.each(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return leases.List(ctx, o)
	}, metav1.ListOptions{LabelSelector: s.Selector}, func(o runtime.Object) error {
		if l := o.(*coordinationv1.Lease); IsLockLease(l.Name) {
			out = append(out, l)
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
}

// listObjects lists one CAPTF kind's objects, metadata only.
func (i *Inspector) listObjects(ctx context.Context, k object.Kind, namespace string) kindList {
	r := kindList{kind: k, served: true, uids: map[object.Ref]types.UID{}}
	res := i.Metadata.Resource(k.GVR()).Namespace(namespace)
	err := i.each(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return res.List(ctx, o)
	}, metav1.ListOptions{}, func(o runtime.Object) error {
		m := o.(*metav1.PartialObjectMetadata)
		ref := object.Ref{Kind: k, Namespace: m.Namespace, Name: m.Name}
		r.names = append(r.names, ref)
		r.uids[ref] = m.UID
		return nil
	})
	switch {
	case apierrors.IsNotFound(err):
		r.served = false
	case err != nil:
		r.err = readError("list", k.Resource+"."+object.Group, namespace, err)
	}
	return r
}

// listJobs returns CAPTF's runner Jobs in scope.
func (i *Inspector) listJobs(ctx context.Context, namespace string) ([]*batchv1.Job, error) {
	var out []*batchv1.Job
	jobs := i.Client.BatchV1().Jobs(namespace)
	err := i.each(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return jobs.List(ctx, o)
	}, metav1.ListOptions{LabelSelector: LabelManaged + "=true"}, func(o runtime.Object) error {
		out = append(out, o.(*batchv1.Job))
		return nil
	})
	if err != nil {
		return nil, readError("list", "jobs.batch", namespace, err)
	}
	return out, nil
}

// listRunnerPods returns CAPTF's runner pods in scope, by namespace/name.
// A pod missing from this list is not proof that it is gone: the list is
// filtered by label, and the controller looks pods up by name.
func (i *Inspector) listRunnerPods(ctx context.Context, namespace string) (map[string]*Pod, error) {
	return i.listPods(ctx, namespace, LabelManaged+"=true")
}

// listPods returns the pods in scope that match selector, by namespace/name.
func (i *Inspector) listPods(ctx context.Context, namespace, selector string) (map[string]*Pod, error) {
	out := map[string]*Pod{}
	pods := i.Client.CoreV1().Pods(namespace)
	err := i.each(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return pods.List(ctx, o)
	}, metav1.ListOptions{LabelSelector: selector}, func(o runtime.Object) error {
		p := o.(*corev1.Pod)
		out[p.Namespace+"/"+p.Name] = podFact(p)
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
// is never sent to the server as a path.
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

func podFact(p *corev1.Pod) *Pod {
	f := &Pod{Name: p.Name, Exists: true, Phase: p.Status.Phase, Terminating: p.DeletionTimestamp != nil, Node: p.Spec.NodeName}
	if f.Phase == corev1.PodSucceeded || f.Phase == corev1.PodFailed {
		f.Status = &p.Status // only a finished pod's end is evidence
	}
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
