// Package bench measures kubectl captf on a large management cluster,
// seeded into the real test-bed, side by side with kubectl: wall time,
// peak memory and API requests, medians of several runs.
package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// Config sizes the cluster and the runs.
type Config struct {
	Leases     int     // lock Leases, one per CAPTF object
	Namespaces int     // spread over this many namespaces
	Held       float64 // the share of locks held
	Unrelated  int     // pods that are not CAPTF's
	Runs       int     // runs of each command; medians are reported
	Loop       int     // held locks walked by the manual runbook loop
	LoopRuns   int
	// Curve are the other lock counts of the growth curve, each measured
	// on a fresh cluster of the same shape, CurveRuns runs each.
	Curve     []int
	CurveRuns int
	// AllStaleLeases locks, AllStaleHeld of them held, on a cluster of
	// their own, for unlock --all-stale (0: not measured); AllStaleRuns
	// runs of locks -A and the dry run.
	AllStaleLeases int
	AllStaleHeld   float64
	AllStaleRuns   int
	// NoisyEvents Events about other objects in the namespace of a lock
	// that explain explains, side by side with the same lock in a
	// namespace without them, NoisyRuns runs each (0: not measured).
	NoisyEvents, NoisyRuns int
	// Idle seeds Leases as real CAPTF leaves them between runs instead of
	// the developers' seed: the free lock Leases locked once and released
	// as the backend releases them (holderIdentity removed, the lock-info
	// annotation deleted, CAPTF's labels kept), no captf-run-* Leases (CAPTF
	// deletes them once it has recorded the run) and no finished runner
	// pods, so that 4 in 5 of all Leases hold no lock and carry no lock
	// info. IdleSeed measures the headline commands on such a cluster too.
	Idle, IdleSeed bool
	// Baseline, when set, is a kubectl-captf binary built from an earlier
	// commit (BaselineLabel names it): its locks -A, and its --all-stale
	// dry run, run interleaved with this build's, so that a change is
	// judged side by side on the same cluster and the same noise.
	Baseline, BaselineLabel string
}

// Default is the cluster: 10,000 locks in 100 namespaces, 20% held.
var Default = Config{Leases: 10000, Namespaces: 100, Held: 0.2, Unrelated: 3000, Runs: 5, Loop: 200, LoopRuns: 3,
	Curve: []int{1000, 50000}, CurveRuns: 3, AllStaleLeases: 5000, AllStaleHeld: 0.1, AllStaleRuns: 3, NoisyEvents: 5000, NoisyRuns: 9,
	IdleSeed: true}

// lockKind is what a seeded lock is.
type lockKind int

const (
	free lockKind = iota
	staleGone
	staleFailed
	live
	foreign
	unknown
)

// seeded is what seed made, for the commands that need names.
type seeded struct {
	held    []heldLock
	explain object.Ref
	counts  map[lockKind]int
}

type heldLock struct {
	ref  object.Ref
	host string
}

func nsName(i int) string { return fmt.Sprintf("team-%03d", i) }

// kindOf spreads held locks over the verdicts: of every 20 held, 7 stale
// with the pod gone, 3 stale with a Failed pod, 6 live, 2 foreign, 2 unknown.
func kindOf(i int, c Config) lockKind {
	every := int(1 / c.Held)
	if every < 1 || i%every != 0 {
		return free
	}
	switch (i / every) % 20 {
	case 0, 1, 2, 3, 4, 5, 6:
		return staleGone
	case 7, 8, 9:
		return staleFailed
	case 10, 11, 12, 13, 14, 15:
		return live
	case 16, 17:
		return foreign
	}
	return unknown
}

// seed fills the cluster through a pool of workers.
func seed(ctx context.Context, cs *testbed.Clients, c Config) (*seeded, error) {
	for i := 0; i < c.Namespaces; i++ {
		if err := cs.Namespace(ctx, nsName(i)); err != nil {
			return nil, err
		}
	}
	s := &seeded{counts: map[lockKind]int{}}
	jobs := make(chan func() error)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Go(func() {
			for job := range jobs {
				if err := job(); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	var mu sync.Mutex
	created := time.Now().Add(-30 * time.Minute)
	for i := 0; i < c.Leases; i++ {
		r := object.Ref{Kind: object.Kinds[i%3], Namespace: nsName(i % c.Namespaces), Name: fmt.Sprintf("obj-%05d", i)}
		k := kindOf(i, c)
		host := fmt.Sprintf("captf-%s-%s-apply-a1-d72d2a-x7k2p", r.Kind.Code, r.Name)
		s.counts[k]++
		if i == c.Leases/2 {
			s.explain = r
		}
		jobs <- func() error {
			if err := cs.Object(ctx, r); err != nil {
				return err
			}
			if !c.Idle {
				runLease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "captf-run-" + r.Suffix(), Namespace: r.Namespace, Labels: map[string]string{"captf.io/lease": "run"}}}
				if _, err := cs.Kube.CoordinationV1().Leases(r.Namespace).Create(ctx, runLease, metav1.CreateOptions{}); err != nil {
					return err
				}
			}
			var holder, info *string
			id := fmt.Sprintf("%08x-0000-0000-0000-000000000000", i)
			switch k {
			case free:
				if c.Idle {
					return released(ctx, cs, r, id, "root@"+host, created)
				}
			case unknown:
				holder, info = &id, ptr("{not json")
			case foreign:
				holder, info = &id, ptr(testbed.LockInfo(id, "alice@laptop", created))
			default:
				holder, info = &id, ptr(testbed.LockInfo(id, "root@"+host, created))
			}
			if _, err := cs.LockLease(ctx, r.Namespace, r.Suffix(), testbed.BackendLabels(r, testbed.ObjectCluster), holder, info); err != nil {
				return err
			}
			if holder != nil {
				mu.Lock()
				s.held = append(s.held, heldLock{ref: r, host: host})
				mu.Unlock()
			}
			switch k {
			case live:
				_, err := cs.RunnerPod(ctx, r, host, corev1.PodRunning)
				return err
			case staleFailed:
				_, err := cs.RunnerPod(ctx, r, host, corev1.PodFailed)
				return err
			case free:
				if i%5 == 1 { // finished runners of earlier Jobs
					_, err := cs.RunnerPod(ctx, r, fmt.Sprintf("captf-%s-%s-refresh-a1-0f0f0f-q1w2e", r.Kind.Code, r.Name), corev1.PodSucceeded)
					return err
				}
			}
			return nil
		}
	}
	for i := 0; i < c.Unrelated; i++ {
		ns, name := nsName(i%c.Namespaces), fmt.Sprintf("app-%05d", i)
		jobs <- func() error {
			_, err := cs.Pod(ctx, ns, name, map[string]string{"app": "web"}, corev1.PodRunning)
			return err
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return nil, err
	default:
	}
	return s, nil
}

// released makes r's lock Lease as the kubernetes backend leaves it after
// a run: created locked, then updated with holderIdentity removed and the
// lock-info annotation deleted (hashicorp/terraform
// internal/backend/remote-state/kubernetes client.go, Lock and Unlock), so
// that its metadata carries what a real release leaves, managedFields
// included.
func released(ctx context.Context, cs *testbed.Clients, r object.Ref, id, who string, created time.Time) error {
	info := testbed.LockInfo(id, who, created)
	l, err := cs.LockLease(ctx, r.Namespace, r.Suffix(), testbed.BackendLabels(r, testbed.ObjectCluster), &id, &info)
	if err != nil {
		return err
	}
	l.Spec.HolderIdentity = nil
	delete(l.Annotations, "app.terraform.io/lock-info")
	_, err = cs.Kube.CoordinationV1().Leases(r.Namespace).Update(ctx, l, metav1.UpdateOptions{})
	return err
}

func ptr(s string) *string { return &s }
