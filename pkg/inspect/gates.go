package inspect

import (
	"context"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// needsGate is true when the owner's gates decide something about the
// lock: its verdict will be Stale with an existing owner (whether CAPTF
// starts a Job decides whether the lock clears), or the owner is being
// deleted (CAPTF may delete the Lease itself, whoever holds it). Only
// those owners are read in full.
func needsGate(f Facts) bool {
	o := f.Owner
	if o == nil || o.Exists == nil || !*o.Exists {
		return false
	}
	if o.Deleting && f.Lease.Workspace == object.DefaultWorkspace {
		return true
	}
	if _, own := OwnPodHost(f.Lease, o); !own {
		return false
	}
	p := f.Pod
	return p == nil || !p.Exists || p.Phase == corev1.PodSucceeded || p.Phase == corev1.PodFailed
}

// gateGets is how many objects of a kind are read by name at most, for
// the gates: the owners, the CAPI Clusters and TerraformClusters they
// inherit from, the state Secrets of the deleting ones. Beyond it, one
// list of each is cheaper, so the gates cost a constant number of
// requests whatever the number of locks.
const gateGets = 3

// readGates reads the owners that needsGate in full, by name up to
// gateGets of them, concurrently, beyond that in one list of each of
// their kinds in scope, then settles their gates. A read that fails
// leaves the gate unknown (nil), which the verdict's reason states; it
// returns one warning for it.
func (i *Inspector) readGates(ctx context.Context, namespace string, c *clusterContext, facts []Facts) []string {
	var need []*Facts
	for n := range facts {
		if needsGate(facts[n]) {
			need = append(need, &facts[n])
		}
	}
	if len(need) == 0 || i.Dynamic == nil {
		return nil
	}
	objs := map[*Facts]*unstructured.Unstructured{}
	errs := make([]error, len(need))
	if len(need) > gateGets {
		want := map[string]bool{}
		for _, f := range need {
			want[f.Owner.Ref.Namespace+"/"+f.Owner.Ref.Suffix()] = true
		}
		lists := map[string]kindList{}
		for _, k := range object.Kinds {
			if slices.ContainsFunc(need, func(f *Facts) bool { return f.Owner.Ref.Kind == k }) {
				lists[k.Name] = i.listObjectsFull(ctx, k, namespace, known(want))
			}
		}
		for n, f := range need {
			l := lists[f.Owner.Ref.Kind.Name]
			if u, ok := l.objects[f.Owner.Ref]; ok {
				objs[f] = u
			} else if l.err != nil {
				errs[n] = l.err
			}
		}
	} else {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for n, f := range need {
			wg.Go(func() {
				r := f.Owner.Ref
				u, err := i.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
				if err != nil {
					errs[n] = readError("get", r.Kind.Resource+"."+object.Group, r.Namespace, err)
					return
				}
				mu.Lock()
				objs[f] = u
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	return append(gateWarning(errs), i.settle(ctx, namespace, c, need, objs)...)
}

// listedGates settles the gates of every owner that needsGate from the
// full lists of the kinds, which kept them as they went.
func (i *Inspector) listedGates(ctx context.Context, namespace string, c *clusterContext, facts []Facts) []string {
	var errs []error
	var need []*Facts
	objs := map[*Facts]*unstructured.Unstructured{}
	for n := range facts {
		f := &facts[n]
		if !needsGate(*f) {
			continue
		}
		l := c.owners.kinds[f.Owner.Ref.Kind.Name]
		if u, ok := l.objects[f.Owner.Ref]; ok {
			need = append(need, f)
			objs[f] = u
		} else if l.err != nil {
			errs = append(errs, l.err)
		}
	}
	return append(gateWarning(errs), i.settle(ctx, namespace, c, need, objs)...)
}

func gateWarning(errs []error) []string {
	if err := firstError(errs); err != nil {
		return []string{err.Error() + "; whether CAPTF will start a Job for its stale locks is shown as unknown"}
	}
	return nil
}
