package inspect

import (
	"context"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
// list of each kind in full is cheaper, so the gates cost at most three
// requests.
const gateGets = 3

// readGates reads the gates of every owner that needsGate, in full (spec
// and status): by name up to gateGets of them, concurrently, beyond that
// in one list of each of their kinds in scope, so requests stay constant in
// the number of locks. A read that fails leaves the gate unknown (nil),
// which the verdict's reason states; it returns one warning for it.
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
	if len(need) > gateGets {
		want := map[string]bool{}
		for _, f := range need {
			want[f.Owner.Ref.Namespace+"/"+f.Owner.Ref.Suffix()] = true
		}
		c := &clusterContext{owners: newOwners(nil)}
		for _, k := range object.Kinds {
			if slices.ContainsFunc(need, func(f *Facts) bool { return f.Owner.Ref.Kind == k }) {
				l := i.listObjectsFull(ctx, k, namespace, known(want))
				c.owners.kinds[k.Name] = l
			}
		}
		return c.listedGates(facts)
	}
	errs := make([]error, len(need))
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

// listedGates sets the gates of every owner that needsGate from the full
// lists of the kinds, which read them as they went.
func (c *clusterContext) listedGates(facts []Facts) []string {
	var errs []error
	for n := range facts {
		f := &facts[n]
		if !needsGate(*f) {
			continue
		}
		l := c.owners.kinds[f.Owner.Ref.Kind.Name]
		if g, ok := l.gates[f.Owner.Ref]; ok {
			f.Gate = &g
		} else if l.err != nil {
			errs = append(errs, l.err)
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
