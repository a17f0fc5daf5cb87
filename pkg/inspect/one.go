package inspect

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// NoLeaseError says a lock Lease does not exist: the state was never
// initialised (or lives elsewhere), so nothing is locked.
type NoLeaseError struct{ Namespace, Name string }

func (e *NoLeaseError) Error() string {
	return fmt.Sprintf("no lock Lease %s in namespace %q: nothing holds this state", e.Name, e.Namespace)
}

// Lock reads one lock Lease live and classifies it, with the same rules
// and the same code as Locks. It reads the Lease, the namespace's CAPTF
// objects and Jobs, and the pod its holder names, by name: a handful of
// requests, whatever the size of the cluster.
// known, when given, is the owner as the caller already read it: its gates
// are taken from it rather than read again. The owner, when it exists, is
// read in full, and its gates are set (Facts.Gate, Result.Object).
func (i *Inspector) Lock(ctx context.Context, namespace, name string, known ...*unstructured.Unstructured) (*Result, []string, error) {
	if !IsLockLease(name) {
		return nil, nil, fmt.Errorf("lease %q is not a Terraform lock Lease (%s<workspace>-<suffix>)", name, object.LockLeasePrefix)
	}
	lease, err := i.Client.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, &NoLeaseError{Namespace: namespace, Name: name}
	}
	if err != nil {
		return nil, nil, readError("get", "leases", namespace, err)
	}
	c, err := i.readContext(ctx, namespace)
	if err != nil {
		return nil, nil, err
	}
	f := c.facts(ParseLease(lease))
	if l := f.Lease; l.Held && l.Info != nil && l.HostErr == nil {
		// Any host that names a pod is reported; an own-pod holder's is
		// the pod the controller reads.
		if f.Pod, err = i.getPod(ctx, namespace, l.Host); err != nil {
			return nil, nil, fmt.Errorf("%w; without it the holder of %s cannot be told live or stale", err, name)
		}
	}
	facts := []Facts{f}
	warnings := c.warnings
	// The owner is read in full whenever it exists: explain shows its
	// gates whatever the verdict, and they cost a few reads for one lock.
	var obj *unstructured.Unstructured
	if o := f.Owner; o != nil && o.Exists != nil && *o.Exists {
		switch k := known; {
		case len(k) == 1 && k[0] != nil && k[0].GetName() == o.Ref.Name && k[0].GetNamespace() == o.Ref.Namespace && k[0].GetKind() == o.Ref.Kind.Name:
			obj = k[0]
		case i.Dynamic != nil:
			u, err := i.Dynamic.Resource(o.Ref.Kind.GVR()).Namespace(o.Ref.Namespace).Get(ctx, o.Ref.Name, metav1.GetOptions{})
			switch {
			case err == nil:
				obj = u
			case needsGate(f):
				warnings = append(warnings, gateWarning([]error{readError("get", o.Ref.Kind.Resource+"."+object.Group, o.Ref.Namespace, err)})...)
			}
		}
	}
	if obj != nil {
		warnings = append(warnings, i.settle(ctx, namespace, c, []*Facts{&facts[0]}, map[*Facts]*unstructured.Unstructured{&facts[0]: obj})...)
	}
	r := c.result(facts[0])
	r.Source, r.Object = lease, obj
	return &r, warnings, nil
}
