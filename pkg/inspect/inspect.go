package inspect

import (
	"context"
	"fmt"
	"sort"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// Inspector reads locks from one cluster.
type Inspector struct {
	Client kubernetes.Interface
	// Metadata lists CAPTF objects by metadata only: names are all the
	// engine needs of most of them.
	Metadata metadata.Interface
	// Dynamic reads in full the owners of stale locks, whose gates decide
	// whether CAPTF will clear them; without it those gates are unknown.
	Dynamic dynamic.Interface
	// PageSize for every list; DefaultPageSize when 0.
	PageSize int64
}

// Scope selects the Leases to inspect.
type Scope struct {
	// Namespace, or "" for all namespaces.
	Namespace string
	// Selector is a label selector applied to the Leases.
	Selector string
	// AllWorkspaces lists every lock-tfstate-* Lease, not only workspace
	// "default", the only one CAPTF uses.
	AllWorkspaces bool
}

// Result is one lock: what was read, and what it means.
type Result struct {
	Facts    Facts
	Decision Decision
	// ActiveJob is the object's active runner Job, nil when none.
	ActiveJob *Job
	// Unreadable lists what RBAC (or the server) kept from being read.
	Unreadable []string
	// Death is why a Stale lock's runner died, where the cluster says.
	Death *v1alpha1.Death
	// Source is the Lease as Lock read it: the object unlock writes back,
	// at its resourceVersion, so that a lock changed since the check is
	// never cleared. Locks leaves it nil and keeps only the Facts.
	Source *coordinationv1.Lease
}

// Report is the outcome of Locks.
type Report struct {
	Results []Result
	// Warnings are one-line notes about reads that failed without making
	// the verdicts wrong.
	Warnings []string
}

// Locks reads every lock Lease in scope and classifies it. Its requests do
// not grow with the number of Leases: one paged list each of Leases, the
// three CAPTF kinds, runner Jobs and runner pods, plus one GET per own-pod
// holder that the pod list did not return.
func (i *Inspector) Locks(ctx context.Context, s Scope) (*Report, error) {
	leases, err := i.listLeases(ctx, s)
	if err != nil {
		return nil, err
	}
	var parsed []Lease
	for _, l := range leases {
		p := ParseLease(l)
		if s.AllWorkspaces || p.Workspace == object.DefaultWorkspace {
			parsed = append(parsed, p)
		}
	}
	rep := &Report{}
	if len(parsed) == 0 {
		return rep, nil
	}
	c, err := i.readContext(ctx, s.Namespace, needsPods(parsed))
	if err != nil {
		return nil, err
	}
	rep.Warnings = c.warnings
	facts := make([]Facts, len(parsed))
	for n, l := range parsed {
		facts[n] = c.facts(l)
	}
	if err := i.readHolderPods(ctx, s.Namespace, facts); err != nil {
		return nil, err
	}
	rep.Warnings = append(rep.Warnings, i.readGates(ctx, s.Namespace, facts)...)
	for _, f := range facts {
		rep.Results = append(rep.Results, c.result(f))
	}
	sort.SliceStable(rep.Results, func(a, b int) bool { return rep.Results[a].before(rep.Results[b]) })
	return rep, nil
}

// clusterContext is what the lists around the Leases gave.
type clusterContext struct {
	owners   *owners
	jobs     []*batchv1.Job
	jobsErr  error
	pods     map[string]*Pod
	warnings []string
}

// readContext runs the lists the verdicts need, concurrently: they are
// independent, and a big cluster pays for them in wall time.
func (i *Inspector) readContext(ctx context.Context, namespace string, pods bool) (*clusterContext, error) {
	c := &clusterContext{}
	kinds := make([]kindList, len(object.Kinds))
	var podsErr error
	var wg sync.WaitGroup
	for n, k := range object.Kinds {
		wg.Go(func() { kinds[n] = i.listObjects(ctx, k, namespace) })
	}
	wg.Go(func() { c.jobs, c.jobsErr = i.listJobs(ctx, namespace) })
	if pods {
		wg.Go(func() { c.pods, podsErr = i.listRunnerPods(ctx, namespace) })
	}
	wg.Wait()
	if podsErr != nil {
		return nil, fmt.Errorf("%w; without pods no verdict can be given", podsErr)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.owners = newOwners(kinds)
	for _, k := range kinds {
		if k.err != nil {
			c.warnings = append(c.warnings, k.err.Error()+"; its objects are shown as unreadable")
		}
	}
	if c.jobsErr != nil {
		c.warnings = append(c.warnings, c.jobsErr.Error()+"; active Jobs are shown as unreadable")
	}
	return c, nil
}

// needsPods is true when some lock names a host, so its pod may matter.
func needsPods(ls []Lease) bool {
	for _, l := range ls {
		if l.Held && l.Info != nil && l.HostErr == nil {
			return true
		}
	}
	return false
}

// facts gathers one lock's facts from the lists: its owner, and the pod
// its host names when the pod list returned it.
func (c *clusterContext) facts(l Lease) Facts {
	f := Facts{Lease: l}
	var warnings []string
	f.Owner, f.NoOwnerWhy, warnings = c.owners.resolve(l)
	f.Warnings = append(append([]string(nil), l.Warnings...), warnings...)
	if l.Held && l.Info != nil && l.HostErr == nil {
		f.Pod = c.pods[l.Namespace+"/"+l.Host]
	}
	return f
}

// holderGets is how many holder pods are read by name at once, and the
// most that are: beyond it one full list of the pods in scope is cheaper.
const holderGets = 16

// readHolderPods settles every own-pod holder that the labelled pod list
// did not return: a pod missing from a label-filtered list may still exist.
// Only a read by name, as the controller does, or a full read of the pods
// proves it gone. Up to holderGets of them are read by name, concurrently;
// more (a cluster with many stale locks) take one unfiltered, paged list
// of the pods in scope, so the requests do not grow with the locks.
func (i *Inspector) readHolderPods(ctx context.Context, namespace string, facts []Facts) error {
	var missing []*Facts
	for n := range facts {
		if _, own := OwnPodHost(facts[n].Lease, facts[n].Owner); own && facts[n].Pod == nil {
			missing = append(missing, &facts[n])
		}
	}
	if len(missing) > holderGets {
		all, err := i.listPods(ctx, namespace, "")
		if err != nil {
			return fmt.Errorf("%w; without it the holders of %d locks cannot be told live or stale", err, len(missing))
		}
		for _, f := range missing {
			if f.Pod = all[f.Lease.Namespace+"/"+f.Lease.Host]; f.Pod == nil {
				f.Pod = missingPod(f.Lease.Host)
			}
		}
		return nil
	}
	errs := make([]error, len(missing))
	sem := make(chan struct{}, holderGets)
	var wg sync.WaitGroup
	for n, f := range missing {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			l := f.Lease
			p, err := i.getPod(ctx, l.Namespace, l.Host)
			if err != nil {
				errs[n] = fmt.Errorf("%w; without it the holder of %s cannot be told live or stale", err, l.Name)
				return
			}
			f.Pod = p
		})
	}
	wg.Wait()
	return firstError(errs)
}

// firstError keeps one error of many, so a missing permission is said
// once, in one line.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// result classifies one lock and adds what the lists say about it.
func (c *clusterContext) result(f Facts) Result {
	r := Result{Facts: f, Decision: Classify(f)}
	r.Death = Death(r, c.jobs, c.jobsErr == nil)
	r.Unreadable = c.owners.unreadable(f.Owner)
	if c.jobsErr != nil {
		r.Unreadable = append(r.Unreadable, "jobs")
	} else if f.Owner != nil {
		r.ActiveJob = ActiveJob(c.jobs, f.Owner.Ref)
	}
	return r
}

// before orders results as a reader scans them: by namespace, then by
// object (kind, then name; locks of no object last), then by Lease name,
// which is a hash and says nothing to a reader.
func (r Result) before(o Result) bool {
	x, y := r.Facts.Lease, o.Facts.Lease
	if x.Namespace != y.Namespace {
		return x.Namespace < y.Namespace
	}
	if a, b := r.Facts.Owner, o.Facts.Owner; a != nil || b != nil {
		switch {
		case b == nil:
			return true
		case a == nil:
			return false
		case a.Ref.Kind.Name != b.Ref.Kind.Name:
			return a.Ref.Kind.Name < b.Ref.Kind.Name
		case a.Ref.Name != b.Ref.Name:
			return a.Ref.Name < b.Ref.Name
		}
	}
	return x.Name < y.Name
}
