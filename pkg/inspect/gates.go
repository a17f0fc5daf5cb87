package inspect

import (
	"context"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// needsGate is true when the lock's verdict will be Stale with an existing
// owner: the one case where whether CAPTF starts a Job decides whether the
// lock clears. Only those owners are read in full.
func needsGate(f Facts) bool {
	if _, own := OwnPodHost(f.Lease, f.Owner); !own || f.Owner.Exists == nil || !*f.Owner.Exists {
		return false
	}
	p := f.Pod
	return p == nil || !p.Exists || p.Phase == corev1.PodSucceeded || p.Phase == corev1.PodFailed
}

// gateGets is how many owners are read by name at most; beyond it, one
// list of each kind they are of is cheaper, so the gates cost at most
// three requests.
const gateGets = 3

// readGates reads the gates of every owner that needsGate, in full (spec
// and status): by name up to gateGets of them, concurrently, beyond that
// one list of each of their kinds in scope, so requests stay constant in
// the number of locks. A read that fails leaves the gate unknown (nil), which the
// verdict's reason states; it returns one warning for it.
func (i *Inspector) readGates(ctx context.Context, namespace string, facts []Facts) []string {
	var need []*Facts
	for n := range facts {
		if needsGate(facts[n]) {
			need = append(need, &facts[n])
		}
	}
	if len(need) == 0 || i.Dynamic == nil {
		return nil
	}
	errs := make([]error, len(need))
	if len(need) <= gateGets {
		var wg sync.WaitGroup
		for n, f := range need {
			wg.Go(func() {
				r := f.Owner.Ref
				u, err := i.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
				if err != nil {
					errs[n] = readError("get", r.Kind.Resource+"."+object.Group, r.Namespace, err)
					return
				}
				g := jobgate.Of(r.Kind.Name, u)
				f.Gate = &g
			})
		}
		wg.Wait()
		return gateWarning(errs)
	}
	for n, k := range object.Kinds {
		if !slices.ContainsFunc(need, func(f *Facts) bool { return f.Owner.Ref.Kind == k }) {
			continue
		}
		byName := map[string]*unstructured.Unstructured{}
		res := i.Dynamic.Resource(k.GVR()).Namespace(namespace)
		err := i.each(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return res.List(ctx, o)
		}, metav1.ListOptions{}, func(o runtime.Object) error {
			u := o.(*unstructured.Unstructured)
			byName[u.GetNamespace()+"/"+u.GetName()] = u
			return nil
		})
		for _, f := range need {
			r := f.Owner.Ref
			if r.Kind != k {
				continue
			}
			if err != nil {
				errs[n] = readError("list", k.Resource+"."+object.Group, namespace, err)
				continue
			}
			if u := byName[r.Namespace+"/"+r.Name]; u != nil {
				g := jobgate.Of(k.Name, u)
				f.Gate = &g
			}
		}
	}
	return gateWarning(errs)
}

func gateWarning(errs []error) []string {
	if err := firstError(errs); err != nil {
		return []string{err.Error() + "; whether CAPTF will start a Job for its stale locks is shown as unknown"}
	}
	return nil
}
