package cluster

import (
	"context"
	"fmt"
	"strings"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// Requests do not grow with the number of locks: whatever reads by name,
// holderGets pods or gateGets objects of a kind at most, turns into one
// list past that.
const (
	// holderGets is how many holder pods are read by name at most: beyond
	// it, one list of the pods in scope is cheaper.
	holderGets = 16
	// gateGets is how many Clusters, TerraformClusters or state Secrets
	// the gates' surroundings read by name at most.
	gateGets = 3
)

// Read reads every lock Lease in scope and what their verdicts depend on,
// in one snapshot: the Leases, CAPTF's runner Jobs, the three CAPTF kinds
// (every object's metadata; in full the owners of the held locks, for
// their gates), the pods that may be the holders (CAPTF's labelled runner
// pods, and every pod a held lock's host may be an own runner pod of, by
// name or, past holderGets, in one list of all pods, since a pod missing
// from a label-filtered list may still exist), and for the owners read in
// full the TerraformClusters they inherit from and, when they are being
// deleted, whether their state Secrets exist. Every list is one unpaged
// request, read as a stream.
//
// The lists overlap: the Jobs and the three kinds start with the first
// lock the Leases list returns, the labelled pods with the first holder
// that names a host, and the whole pod list as soon as more than
// holderGets holders may be runner pods. The kinds' items wait, buffered
// by the transport, until the Leases say which owners to keep in full.
func (r *Reader) Read(ctx context.Context, s inspect.Scope) (*inspect.Snapshot, error) {
	ctx, cancel := context.WithCancel(ctx)
	rd := &reads{r: r, ctx: ctx, namespace: s.Namespace, held: newHeld()}
	defer func() { cancel(); rd.wg.Wait() }()
	holders := map[string]bool{}
	leases, err := r.listLeases(ctx, s, func(l inspect.Lease) {
		rd.startJobs()
		rd.startKinds()
		if l.Held && l.Info != nil && l.HostErr == nil {
			rd.startPods(false)
		}
		if host, ok := inspect.HolderPod(l); ok {
			if holders[inspect.Key(l.Namespace, host)] = true; len(holders) > holderGets {
				rd.startPods(true)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for _, l := range leases {
		if k, held, ok := inspect.OwnerKey(l); ok {
			rd.held.keys[k] = rd.held.keys[k] || held
		}
	}
	close(rd.held.ready)
	snap := &inspect.Snapshot{Leases: leases}
	if len(leases) == 0 {
		return snap, nil
	}
	if err := rd.wait(snap); err != nil {
		return nil, err
	}
	var all map[string]podEntry
	if rd.pods != nil && rd.pods.full {
		all = rd.pods.entries
	}
	if err := r.readHolders(ctx, snap, holders, all); err != nil {
		return nil, err
	}
	r.readEnv(ctx, s.Namespace, snap)
	return snap, nil
}

// held are the locks of workspace default a read found, by
// "<namespace>/<suffix>", true for a held one: known once ready is closed.
type held struct {
	ready chan struct{}
	keys  map[string]bool
}

func newHeld() *held { return &held{ready: make(chan struct{}), keys: map[string]bool{}} }

// wants waits until the locks are known, and says whether the object ref
// is kept in full, as inspect.KeepInFull says.
func (h *held) wants(ctx context.Context, ref object.Ref, deleting bool) (bool, error) {
	select {
	case <-h.ready:
		held, owns := h.keys[ref.Namespace+"/"+ref.Suffix()]
		return owns && inspect.KeepInFull(held, deleting), nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// reads are the lists around the Leases, each started at most once, as
// soon as it is known to be needed, and run concurrently: they are
// independent, and a big cluster pays for them in wall time. The start
// methods are called from one goroutine; wait collects the lists.
type reads struct {
	r         *Reader
	ctx       context.Context
	namespace string
	held      *held
	wg        sync.WaitGroup

	jobsStarted bool
	jobs        []*batchv1.Job
	jobsErr     error

	pods *podRead

	kinds []objectList
}

// podRead is one pod list: the labelled list of runner pods, or the whole
// list, which replaces it when many holders are to be read.
type podRead struct {
	full    bool
	cancel  context.CancelFunc
	entries map[string]podEntry
	err     error
}

func (rd *reads) startJobs() {
	if rd.jobsStarted {
		return
	}
	rd.jobsStarted = true
	rd.wg.Go(func() { rd.jobs, rd.jobsErr = rd.r.listJobs(rd.ctx, rd.namespace, "") })
}

// startPods starts the labelled pod list, or the whole one (full), which
// cancels a labelled one already running: its pods are among the whole
// list's.
func (rd *reads) startPods(full bool) {
	if rd.pods != nil && (rd.pods.full || !full) {
		return
	}
	if rd.pods != nil {
		rd.pods.cancel()
	}
	ctx, cancel := context.WithCancel(rd.ctx)
	p := &podRead{full: full, cancel: cancel}
	rd.pods = p
	selector := inspect.LabelManaged + "=true"
	if full {
		selector = ""
	}
	rd.wg.Go(func() { p.entries, p.err = rd.r.listPods(ctx, rd.namespace, selector) })
}

// startKinds lists the three CAPTF kinds, keeping in full the owners of
// the held locks.
func (rd *reads) startKinds() {
	if rd.kinds != nil {
		return
	}
	rd.kinds = make([]objectList, len(object.Kinds))
	for n, k := range object.Kinds {
		rd.wg.Go(func() {
			rd.kinds[n] = rd.r.listObjects(rd.ctx, k, rd.namespace, func(ref object.Ref, deleting bool) (bool, error) {
				return rd.held.wants(rd.ctx, ref, deleting)
			})
		})
	}
}

// wait waits for every list started and puts them into snap.
func (rd *reads) wait(snap *inspect.Snapshot) error {
	rd.wg.Wait()
	if p := rd.pods; p != nil && p.err != nil {
		return fmt.Errorf("%w; without pods no verdict can be given", p.err)
	}
	if err := rd.ctx.Err(); err != nil {
		return err
	}
	snap.Jobs, snap.JobsErr = rd.jobs, rd.jobsErr
	snap.Kinds = map[string]inspect.KindList{}
	snap.Objects = map[object.Ref]*unstructured.Unstructured{}
	for _, l := range rd.kinds {
		snap.Kinds[l.Kind.Name] = l.KindList
		for ref, u := range l.full {
			snap.Objects[ref] = u
		}
		if l.Err != nil {
			snap.Warnings = append(snap.Warnings, l.Err.Error()+"; its objects are shown as unreadable")
		}
	}
	if rd.jobsErr != nil {
		snap.Warnings = append(snap.Warnings, rd.jobsErr.Error()+"; active Jobs are shown as unreadable")
	}
	snap.Pods = map[string]*inspect.Pod{}
	if p := rd.pods; p != nil {
		for key, e := range p.entries {
			if e.managed {
				snap.Pods[key] = e.pod
			}
		}
	}
	return nil
}

// readHolders settles every pod a held lock's host may be an own runner
// pod of that the labelled list did not return: a pod missing from a
// label-filtered list may still exist, and only a read by name, as the
// controller does, or a read of every pod proves it gone. all, the whole
// list when it was read, settles them; else each is read by name (at most
// holderGets of them, as Read reads every pod past that).
func (r *Reader) readHolders(ctx context.Context, snap *inspect.Snapshot, holders map[string]bool, all map[string]podEntry) error {
	var missing []string
	for k := range holders {
		if _, ok := snap.Pods[k]; !ok {
			missing = append(missing, k)
		}
	}
	if all != nil {
		// The whole list kept every pod named as a runner pod.
		for _, k := range missing {
			if e, ok := all[k]; ok {
				snap.Pods[k] = e.pod
			} else {
				_, name := splitKey(k)
				snap.Pods[k] = inspect.MissingPod(name)
			}
		}
		return nil
	}
	pods := make([]*inspect.Pod, len(missing))
	errs := make([]error, len(missing))
	var wg sync.WaitGroup
	for n, k := range missing {
		wg.Go(func() {
			ns, name := splitKey(k)
			pods[n], errs[n] = r.getPod(ctx, ns, name)
			if errs[n] != nil {
				errs[n] = fmt.Errorf("%w; without it the holder of a lock in %s cannot be told live or stale", errs[n], ns)
			}
		})
	}
	wg.Wait()
	if err := firstError(errs); err != nil {
		return err
	}
	for n, k := range missing {
		snap.Pods[k] = pods[n]
	}
	return nil
}

// splitKey splits a "<namespace>/<name>" key.
func splitKey(k string) (namespace, name string) {
	ns, n, _ := strings.Cut(k, "/")
	return ns, n
}
