package cmd

import (
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

// resolveTarget resolves `TYPE/NAME` or `TYPE NAME` as kubectl does,
// through cli-runtime's resource builder and the cluster's RESTMapper: the
// kind, singular, plural, group-qualified or short name of a CAPTF kind, or
// lease/NAME for any Terraform lock Lease (which also works where CAPTF's
// CRDs are not installed).
func resolveTarget(f *factory, namespace string, args []string) (*target, error) {
	infos, err := f.builder().
		Unstructured().
		NamespaceParam(namespace).DefaultNamespace().
		ResourceTypeOrNameArgs(false, args...).
		SingleResourceType().
		Flatten().
		Do().Infos()
	if err != nil {
		return nil, targetError(err, namespace)
	}
	if len(infos) != 1 {
		return nil, fmt.Errorf("name exactly one object, not %d", len(infos))
	}
	info := infos[0]
	gk := info.Mapping.GroupVersionKind.GroupKind()
	t := &target{Namespace: info.Namespace}
	switch {
	case gk == leaseGK:
		if !inspect.IsLockLease(info.Name) {
			return nil, fmt.Errorf("lease %q is not a Terraform lock Lease (%s<workspace>-<suffix>); CAPTF's own leases are never unlocked", info.Name, object.LockLeasePrefix)
		}
		t.Lease, t.Arg = info.Name, "lease/"+info.Name
	case gk.Group == object.Group:
		k, ok := object.KindByName(gk.Kind)
		if !ok {
			return nil, fmt.Errorf("%s has no Terraform state: name a TerraformCluster, TerraformMachine, TerraformMachinePool or a lock lease", strings.ToLower(gk.Kind))
		}
		r := object.Ref{Kind: k, Namespace: info.Namespace, Name: info.Name}
		t.Object, t.Lease, t.Arg = &r, object.LockLeaseName(object.DefaultWorkspace, r.Suffix()), r.String()
		t.Fetched, _ = info.Object.(*unstructured.Unstructured)
	default:
		return nil, fmt.Errorf("%s has no Terraform state: name a TerraformCluster, TerraformMachine, TerraformMachinePool or a lock lease", strings.ToLower(gk.Kind))
	}
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
