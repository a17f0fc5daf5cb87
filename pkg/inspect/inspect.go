package inspect

import (
	"context"
	"fmt"
	"sort"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"

	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
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
	// PageSize for every list; DefaultPageSize when 0, none when negative.
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
	// Object is the owner as Lock read it in full, nil when it did not
	// (Locks never keeps it).
	Object *unstructured.Unstructured
}

// Report is the outcome of Locks.
type Report struct {
	Results []Result
	// Warnings are one-line notes about reads that failed without making
	// the verdicts wrong.
	Warnings []string
}

// Locks reads every lock Lease in scope and classifies it. Its requests do
// not grow with the number of Leases: one list each of Leases, the three
// CAPTF kinds, runner Jobs and pods, at most holderGets GETs of holder
// pods, and for the owners whose gates decide something (needsGate) at
// most gateGets reads (else one list) each of the owners, the CAPI
// Clusters and TerraformClusters their machines and pools inherit from,
// and the state Secrets' metadata of those being deleted.
//
// The lists overlap: the Jobs list starts with the first lock the Leases
// list returns, the pod list with the first holder that names a host, and
// the full lists of the CAPTF kinds as soon as more than gateGets owners
// may need their gates read (their items wait, buffered by the transport,
// until the Leases say which objects' gates to read); otherwise the kinds
// are listed by metadata once the Leases are read.
func (i *Inspector) Locks(ctx context.Context, s Scope) (*Report, error) {
	ctx, cancel := context.WithCancel(ctx)
	r := &reads{in: i, ctx: ctx, namespace: s.Namespace}
	defer func() { cancel(); r.wg.Wait() }()
	want := &gateWant{ready: make(chan struct{}), keys: map[string]bool{}, locks: map[string]bool{}}
	owned := 0
	parsed, err := i.listLeases(ctx, s, func(l Lease) {
		r.startJobs()
		if names(l) {
			r.startPods(false)
		}
		if !maybeOwnPod(l) {
			return
		}
		if owned++; owned > holderGets {
			r.startPods(true)
		}
		if owned > gateGets && i.Dynamic != nil && r.kinds == nil {
			r.startKinds(want)
		}
	})
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	if len(parsed) == 0 {
		return rep, nil
	}
	for _, l := range parsed {
		if maybeOwnPod(l) {
			want.keys[l.Namespace+"/"+l.Suffix] = true
		}
		if l.Workspace == object.DefaultWorkspace {
			want.locks[l.Namespace+"/"+l.Suffix] = true
		}
	}
	close(want.ready)
	full := r.kinds != nil
	if !full {
		r.startKinds(nil)
	}
	c, err := r.wait()
	if err != nil {
		return nil, err
	}
	rep.Warnings = c.warnings
	facts := make([]Facts, len(parsed))
	for n, l := range parsed {
		facts[n] = c.facts(l)
	}
	if err := i.readHolderPods(ctx, s.Namespace, facts, c.all); err != nil {
		return nil, err
	}
	if full {
		rep.Warnings = append(rep.Warnings, i.listedGates(ctx, s.Namespace, c, facts)...)
	} else {
		rep.Warnings = append(rep.Warnings, i.readGates(ctx, s.Namespace, c, facts)...)
	}
	rep.Results = make([]Result, len(facts))
	for n, f := range facts {
		rep.Results[n] = c.result(f)
	}
	sort.SliceStable(rep.Results, func(a, b int) bool { return rep.Results[a].before(rep.Results[b]) })
	return rep, nil
}

// gateWant are the objects a full list of the kinds keeps in full, for
// their gates, by "<namespace>/<suffix>": known once ready is closed.
type gateWant struct {
	ready chan struct{}
	// keys are the objects of locks whose holder may be an own runner pod.
	keys map[string]bool
	// locks are the objects of every lock of workspace default: one being
	// deleted is kept too, as CAPTF may delete its Lease.
	locks map[string]bool
}

// wants waits until the objects are known, and says whether the object
// of key, deleting or not, is one to keep.
func (w *gateWant) wants(ctx context.Context, key string, deleting bool) (bool, error) {
	select {
	case <-w.ready:
		return w.keys[key] || (deleting && w.locks[key]), nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// known is a gateWant of the given keys, deleting or not.
func known(keys map[string]bool) *gateWant {
	w := &gateWant{ready: make(chan struct{}), keys: keys, locks: keys}
	close(w.ready)
	return w
}

// names is true when a lock names a host, so its pod may matter.
func names(l Lease) bool { return l.Held && l.Info != nil && l.HostErr == nil }

// maybeOwnPod is true when a lock's host may be a pod of its owner's own
// runner Jobs (OwnPodHost, before the owner is known): the locks whose
// pods are read by name and whose owners' gates may be needed.
func maybeOwnPod(l Lease) bool {
	if !names(l) || l.ID == "" {
		return false
	}
	_, err := runner.ParsePodName(l.Host)
	return err == nil
}

// clusterContext is what the lists around the Leases gave.
type clusterContext struct {
	owners *owners
	// jobIndex finds the runner Jobs the list gave.
	jobIndex jobIndex
	jobsErr  error
	// pods are the pods CAPTF labels, as the labelled list returns them;
	// all, when the whole pod list was read, every pod that may be a
	// holder, by namespace/name.
	pods, all map[string]*Pod
	warnings  []string
}

// reads are the lists around the Leases, each started at most once, as
// soon as it is known to be needed, and run concurrently: they are
// independent, and a big cluster pays for them in wall time. The start
// methods are called from one goroutine; wait collects the lists.
type reads struct {
	in        *Inspector
	ctx       context.Context
	namespace string
	wg        sync.WaitGroup

	jobsStarted bool
	jobs        []*batchv1.Job
	jobsErr     error

	pods *podRead

	kinds []kindList
}

// podRead is one pod list: the labelled list of runner pods, or the whole
// list, which replaces it when many holders are to be read.
type podRead struct {
	full    bool
	cancel  context.CancelFunc
	entries map[string]podEntry
	err     error
}

func (r *reads) startJobs() {
	if r.jobsStarted {
		return
	}
	r.jobsStarted = true
	r.wg.Go(func() { r.jobs, r.jobsErr = r.in.listJobs(r.ctx, r.namespace) })
}

// startPods starts the labelled pod list, or the whole one (full), which
// cancels a labelled one already running: its pods are among the whole
// list's.
func (r *reads) startPods(full bool) {
	if r.pods != nil && (r.pods.full || !full) {
		return
	}
	if r.pods != nil {
		r.pods.cancel()
	}
	ctx, cancel := context.WithCancel(r.ctx)
	p := &podRead{full: full, cancel: cancel}
	r.pods = p
	selector := LabelManaged + "=true"
	if full {
		selector = ""
	}
	r.wg.Go(func() { p.entries, p.err = r.in.listPods(ctx, r.namespace, selector) })
}

// startKinds lists the CAPTF kinds: by metadata, or in full with the gates
// of the objects of want when want is not nil.
func (r *reads) startKinds(want *gateWant) {
	r.kinds = make([]kindList, len(object.Kinds))
	for n, k := range object.Kinds {
		r.wg.Go(func() {
			if want != nil {
				r.kinds[n] = r.in.listObjectsFull(r.ctx, k, r.namespace, want)
			} else {
				r.kinds[n] = r.in.listObjects(r.ctx, k, r.namespace)
			}
		})
	}
}

// wait waits for every list started and gathers them.
func (r *reads) wait() (*clusterContext, error) {
	r.wg.Wait()
	if p := r.pods; p != nil {
		if p.err != nil {
			return nil, fmt.Errorf("%w; without pods no verdict can be given", p.err)
		}
	}
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	c := &clusterContext{owners: newOwners(r.kinds), jobIndex: indexJobs(r.jobs), jobsErr: r.jobsErr, pods: map[string]*Pod{}}
	if p := r.pods; p != nil {
		if p.full {
			c.all = map[string]*Pod{}
		}
		for key, e := range p.entries {
			if e.managed {
				c.pods[key] = e.pod
			}
			if c.all != nil {
				c.all[key] = e.pod
			}
		}
	}
	for _, k := range r.kinds {
		if k.err != nil {
			c.warnings = append(c.warnings, k.err.Error()+"; its objects are shown as unreadable")
		}
	}
	if c.jobsErr != nil {
		c.warnings = append(c.warnings, c.jobsErr.Error()+"; active Jobs are shown as unreadable")
	}
	return c, nil
}

// readContext runs the lists around one lock: the CAPTF kinds by metadata
// and the Jobs.
func (i *Inspector) readContext(ctx context.Context, namespace string) (*clusterContext, error) {
	r := &reads{in: i, ctx: ctx, namespace: namespace}
	r.startJobs()
	r.startKinds(nil)
	return r.wait()
}

// facts gathers one lock's facts from the lists: its owner, and the pod
// its host names when the labelled pod list returned it.
func (c *clusterContext) facts(l Lease) Facts {
	f := Facts{Lease: l}
	var warnings []string
	f.Owner, f.NoOwnerWhy, warnings = c.owners.resolve(l)
	f.Warnings = append(append([]string(nil), l.Warnings...), warnings...)
	if names(l) {
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
// proves it gone. all, when the whole pod list was read, settles them all;
// else up to holderGets of them are read by name, concurrently, and more
// take one unfiltered list of the pods in scope, so the requests do not
// grow with the locks.
func (i *Inspector) readHolderPods(ctx context.Context, namespace string, facts []Facts, all map[string]*Pod) error {
	var missing []*Facts
	for n := range facts {
		if _, own := OwnPodHost(facts[n].Lease, facts[n].Owner); own && facts[n].Pod == nil {
			missing = append(missing, &facts[n])
		}
	}
	if all == nil && len(missing) > holderGets {
		entries, err := i.listPods(ctx, namespace, "")
		if err != nil {
			return fmt.Errorf("%w; without it the holders of %d locks cannot be told live or stale", err, len(missing))
		}
		all = map[string]*Pod{}
		for key, e := range entries {
			all[key] = e.pod
		}
	}
	if all != nil {
		for _, f := range missing {
			if f.Pod = all[f.Lease.Namespace+"/"+f.Lease.Host]; f.Pod == nil {
				f.Pod = missingPod(f.Lease.Host)
			}
		}
		return nil
	}
	errs := make([]error, len(missing))
	var wg sync.WaitGroup
	for n, f := range missing {
		wg.Go(func() {
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
	r.Death = Death(r, c.jobIndex.named, c.jobsErr == nil)
	r.Unreadable = c.owners.unreadable(f.Owner)
	if c.jobsErr != nil {
		r.Unreadable = append(r.Unreadable, "jobs")
	} else if f.Owner != nil {
		r.ActiveJob = ActiveJob(c.jobIndex.of(f.Owner.Ref), f.Owner.Ref, f.Owner.UID)
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
