package cluster

import (
	"context"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
)

// protoObject is a built-in type's object, which decodes from protobuf.
type protoObject[T any] interface {
	*T
	runtime.Object
	Unmarshal([]byte) error
}

// eachTyped lists a built-in resource, handing each item to fn, decoded
// into a fresh object of its own, without its managedFields. named, when
// not nil, picks the items worth decoding by name: a protobuf item whose
// name it refuses is skipped undecoded (half the Leases of a CAPTF cluster
// are its captf-run ones); fn must still check the name, as a JSON
// response hands it every item.
func eachTyped[T any, P protoObject[T]](ctx context.Context, r *Reader, p listPath, selector string, named func(string) bool, fn func(P) error) error {
	var scratch []byte
	return stream(ctx, r.rest, p, selector, func(b []byte, proto bool) error {
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
			err = kjson.UnmarshalCaseSensitivePreserveInts(b, obj)
		}
		if err != nil {
			return fmt.Errorf("decoding a %s list item: %w", p.resource, err)
		}
		return fn(obj)
	})
}

// listLeases returns the lock Leases in scope, parsed, calling found for
// each as it is read, so that the lists it calls for start at once.
func (r *Reader) listLeases(ctx context.Context, s inspect.Scope, found func(inspect.Lease)) ([]inspect.Lease, error) {
	var out []inspect.Lease
	err := eachTyped(ctx, r, listPath{"/apis/coordination.k8s.io/v1", "leases", s.Namespace}, s.Selector, inspect.IsLockLease,
		func(l *coordinationv1.Lease) error {
			if !inspect.IsLockLease(l.Name) {
				return nil
			}
			if p := inspect.ParseLease(l); s.AllWorkspaces || p.Workspace == object.DefaultWorkspace {
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

// objectList is one CAPTF kind's list: what every lock's owner resolution
// reads of it, and the objects kept in full.
type objectList struct {
	inspect.KindList
	full map[object.Ref]*unstructured.Unstructured
}

// listObjects lists one CAPTF kind's objects in full, as JSON, the one
// format the API server serves custom resources in. Every object's
// metadata is read; only the objects keep says, once it can, are decoded
// whole and kept, for their gates. keep may wait (for the Leases to say
// which owners are wanted); the transport buffers the list meanwhile.
func (r *Reader) listObjects(ctx context.Context, k object.Kind, namespace string, keep func(ref object.Ref, deleting bool) (bool, error)) objectList {
	l := objectList{KindList: inspect.NewKindList(k), full: map[object.Ref]*unstructured.Unstructured{}}
	gvr := k.GVR()
	err := stream(ctx, r.rest, listPath{"/apis/" + gvr.Group + "/" + gvr.Version, gvr.Resource, namespace}, "",
		func(b []byte, proto bool) error {
			if proto {
				// kube-apiserver serves custom resources in JSON only;
				// whatever answered in protobuf is not what CAPTF reads.
				return fmt.Errorf("a %s list came in protobuf, which custom resources are not served in", k.Resource)
			}
			m, err := metaOf(b)
			if err != nil {
				return fmt.Errorf("reading a %s list item: %w", k.Resource, err)
			}
			ref := object.Ref{Kind: k, Namespace: m.Namespace, Name: m.Name}
			l.Objects[ref] = inspect.ObjectMeta{UID: m.UID, Deleting: m.Deleting, ClusterLabel: m.ClusterLabel, OwnerCluster: m.OwnerCluster}
			ok, err := keep(ref, m.Deleting)
			if err != nil || !ok {
				return err
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(b); err != nil {
				return fmt.Errorf("decoding a %s list item: %w", k.Resource, err)
			}
			unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
			l.full[ref] = u
			return nil
		})
	switch {
	case apierrors.IsNotFound(err):
		l.Served = false
	case err != nil:
		l.Err = readError("list", k.Resource+"."+object.Group, namespace, err)
	}
	return l
}

// listJobs returns CAPTF's runner Jobs in scope, with what Death,
// ActiveJob and the force-unlock evidence read of them: metadata (labels
// and owner references), status, and of the spec only the containers'
// --force-unlock and --image args (inspect.FlagForceUnlock, FlagImage),
// so a kept Job costs what those hold. It selects captf.io/managed=true, as CAPTF's Job cache does
// (internal/manager/cache.go jobSelector, at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517: owner-kind label present and
// captf.io/managed=true): a Job without it is never one CAPTF counts.
func (r *Reader) listJobs(ctx context.Context, namespace, selector string) ([]*batchv1.Job, error) {
	var out []*batchv1.Job
	if selector == "" {
		selector = inspect.LabelManaged + "=true"
	}
	err := eachTyped(ctx, r, listPath{"/apis/batch/v1", "jobs", namespace}, selector, nil,
		func(j *batchv1.Job) error {
			var kept []corev1.Container
			for _, c := range j.Spec.Template.Spec.Containers {
				var args []string
				for _, a := range c.Args {
					if strings.HasPrefix(a, inspect.FlagForceUnlock) || strings.HasPrefix(a, inspect.FlagImage) {
						args = append(args, a)
					}
				}
				if args != nil {
					kept = append(kept, corev1.Container{Name: c.Name, Args: args})
				}
			}
			j.Spec = batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: kept}}}
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
	pod *inspect.Pod
	// managed is whether the pod carries CAPTF's label, that is whether
	// the labelled list of runner pods returns it.
	managed bool
}

// listPods returns the pods in scope that match selector, by
// namespace/name. Of an unfiltered list it keeps only the pods CAPTF
// labels and those named as its runner pods are: no other pod can be a
// holder whose verdict depends on it.
func (r *Reader) listPods(ctx context.Context, namespace, selector string) (map[string]podEntry, error) {
	out := map[string]podEntry{}
	err := eachTyped(ctx, r, listPath{"/api/v1", "pods", namespace}, selector, nil,
		func(p *corev1.Pod) error {
			managed := p.Labels[inspect.LabelManaged] == "true"
			if _, err := runner.ParsePodName(p.Name); managed || err == nil {
				out[inspect.Key(p.Namespace, p.Name)] = podEntry{pod: inspect.PodFact(p), managed: managed}
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
func (r *Reader) getPod(ctx context.Context, namespace, name string) (*inspect.Pod, error) {
	if !inspect.ValidName(name) {
		return inspect.MissingPod(name), nil
	}
	p, err := r.Client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return inspect.MissingPod(name), nil
	}
	if err != nil {
		return nil, readError("get", "pods", namespace, err)
	}
	return inspect.PodFact(p), nil
}
