package cluster

import (
	"context"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// ReadLock reads one lock Lease live, and all its verdict depends on, into
// a snapshot of that lock alone: the Lease by name (kept as read, for
// unlock's write), the namespace's CAPTF objects (its owner in full when
// Read would keep it: inspect.KeepInFull), its runner Jobs, the pod its
// host names, by name, and what the owner's gates read around it. A handful of requests, whatever the size of the cluster; a
// Lease that does not exist is an *inspect.NoLeaseError.
func (r *Reader) ReadLock(ctx context.Context, namespace, name string) (*inspect.Snapshot, error) {
	lease, err := r.getLease(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	l := inspect.ParseLease(lease)
	ctx, cancel := context.WithCancel(ctx)
	rd := &reads{r: r, ctx: ctx, namespace: namespace, held: newHeld()}
	defer func() { cancel(); rd.wg.Wait() }()
	if k, held, ok := inspect.OwnerKey(l); ok {
		rd.held.keys[k] = held
	}
	close(rd.held.ready)
	rd.startJobs()
	rd.startKinds()
	snap := &inspect.Snapshot{Leases: []inspect.Lease{l}, Sources: map[string]*coordinationv1.Lease{inspect.Key(namespace, name): lease}}
	if err := rd.wait(snap); err != nil {
		return nil, err
	}
	if err := r.readHost(ctx, snap, l); err != nil {
		return nil, err
	}
	r.readEnv(ctx, namespace, snap)
	return snap, nil
}

// Refresh reads one lock of snap again, live: its Lease, and the pod its
// host names, by name; nothing else. It returns a snapshot of that lock
// alone, with everything else as snap read it: what a guard checks just
// before a write (unlock --all-stale), in two requests a lock.
func (r *Reader) Refresh(ctx context.Context, snap *inspect.Snapshot, namespace, name string) (*inspect.Snapshot, error) {
	lease, err := r.getLease(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	l := inspect.ParseLease(lease)
	fresh := *snap
	fresh.Leases = []inspect.Lease{l}
	fresh.Sources = map[string]*coordinationv1.Lease{inspect.Key(namespace, name): lease}
	// Only the pod this lock's host names decides it: the rest of the
	// scope's pods are not copied for every lock.
	fresh.Pods = map[string]*inspect.Pod{}
	fresh.Warnings = nil
	if err := r.readHost(ctx, &fresh, l); err != nil {
		return nil, err
	}
	return &fresh, nil
}

// getLease reads a lock Lease by name.
func (r *Reader) getLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	if !inspect.IsLockLease(name) {
		return nil, fmt.Errorf("lease %q is not a Terraform lock Lease (%s<workspace>-<suffix>)", name, object.LockLeasePrefix)
	}
	lease, err := r.Client.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, &inspect.NoLeaseError{Namespace: namespace, Name: name}
	}
	if err != nil {
		return nil, readError("get", "leases", namespace, err)
	}
	return lease, nil
}

// readHost reads, by name, the pod a single lock's host may be a runner
// pod of (inspect.HolderPod), as the controller does, and as Read does for
// every lock: a host that cannot be a runner pod's name is not read, so
// that a lock is decided alike whichever read it came from.
func (r *Reader) readHost(ctx context.Context, snap *inspect.Snapshot, l inspect.Lease) error {
	host, ok := inspect.HolderPod(l)
	if !ok {
		return nil
	}
	p, err := r.getPod(ctx, l.Namespace, host)
	if err != nil {
		return fmt.Errorf("%w; without it the holder of %s cannot be told live or stale", err, l.Name)
	}
	snap.Pods[inspect.Key(l.Namespace, host)] = p
	return nil
}
