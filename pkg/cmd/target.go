package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/inspect/cluster"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

var leaseGK = schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}

// target is the lock an argument names.
type target struct {
	Namespace string
	Lease     string
	// Object is set when the argument named a CAPTF object.
	Object *object.Ref
	// Arg is the argument in kubectl's TYPE/NAME form, for messages and
	// the commands printed as advice.
	Arg string
	// Fetched is the object as the builder read it.
	Fetched *unstructured.Unstructured
}

// resolveTargetUntil is resolveTarget, given up when ctx ends (Ctrl-C, a
// signal): cli-runtime's builder reads discovery and the object without a
// context, so an API server that takes connections and never answers
// would hold a signal for its timeouts, two minutes and more, with
// nothing printed. Nothing is written before the target is resolved, so
// the run ends at once; the abandoned read ends with the process.
func resolveTargetUntil(ctx context.Context, f *factory, namespace string, args []string) (*target, error) {
	type resolved struct {
		t   *target
		err error
	}
	done := make(chan resolved, 1)
	go func() {
		t, err := resolveTarget(f, namespace, args)
		done <- resolved{t, err}
	}()
	select {
	case r := <-done:
		return r.t, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// resolveTarget resolves `TYPE/NAME` or `TYPE NAME` as kubectl does,
// through cli-runtime's resource builder and the cluster's RESTMapper: the
// kind, singular, plural, group-qualified or short name of a CAPTF kind, or
// lease/NAME for any Terraform lock Lease (which also works where CAPTF's
// CRDs are not installed).
//
// The type is resolved first, through discovery only; a type that cannot
// be a lock (a Secret, say) is refused before any request reads the
// object, so that naming one never fetches its data.
func resolveTarget(f *factory, namespace string, args []string) (*target, error) {
	res := f.builder().
		Unstructured().
		NamespaceParam(namespace).DefaultNamespace().
		ResourceTypeOrNameArgs(false, args...).
		SingleResourceType().
		Flatten().
		Do()
	if err := res.Err(); err != nil {
		return nil, targetError(err, namespace)
	}
	mapping, err := res.ResourceMapping()
	if err != nil {
		return nil, err
	}
	gk := mapping.GroupVersionKind.GroupKind()
	kind, isObject := object.KindByName(gk.Kind)
	if gk != leaseGK && (gk.Group != object.Group || !isObject) {
		return nil, fmt.Errorf("%s has no Terraform state: name a TerraformCluster, TerraformMachine, TerraformMachinePool or a lock lease", strings.ToLower(gk.Kind))
	}
	infos, err := res.Infos()
	if err != nil {
		return nil, targetError(err, namespace)
	}
	if len(infos) != 1 {
		return nil, fmt.Errorf("name exactly one object, not %d", len(infos))
	}
	info := infos[0]
	t := &target{Namespace: info.Namespace}
	if gk == leaseGK {
		if !inspect.IsLockLease(info.Name) {
			return nil, fmt.Errorf("lease %q is not a Terraform lock Lease (%s<workspace>-<suffix>); CAPTF's own leases are never unlocked", info.Name, object.LockLeasePrefix)
		}
		t.Lease, t.Arg = info.Name, "lease/"+info.Name
		return t, nil
	}
	r := object.Ref{Kind: kind, Namespace: info.Namespace, Name: info.Name}
	t.Object, t.Lease, t.Arg = &r, object.LockLeaseName(object.DefaultWorkspace, r.Suffix()), r.String()
	t.Fetched, _ = info.Object.(*unstructured.Unstructured)
	return t, nil
}

// targetError says, for a read of the target the server refused, what the
// plugin needed, as the reading layer's errors do.
func targetError(err error, namespace string) error {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil || status.Status().Details.Kind == "" || status.Status().Details.Name == "" {
		return err // not a read of one object (discovery, say)
	}
	d := status.Status().Details
	resource := d.Kind
	if d.Group != "" {
		resource += "." + d.Group
	}
	if !apierrors.IsUnauthorized(err) && !apierrors.IsForbidden(err) {
		return err
	}
	return cluster.ReadError("get", resource, fmt.Sprintf("%s %q in namespace %q", resource, d.Name, namespace), err)
}
