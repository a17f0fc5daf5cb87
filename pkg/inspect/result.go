package inspect

import (
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
)

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
	// Source is the Lease as read, where the snapshot kept it (a single
	// lock's): the object unlock writes back, at its resourceVersion, so
	// that a lock changed since the check is never cleared.
	Source *coordinationv1.Lease
	// Object is the owner as read in full, nil when it was not.
	Object *unstructured.Unstructured
}

// Report is the verdicts of a snapshot.
type Report struct {
	Results []Result
	// Warnings are one-line notes about reads that failed without making
	// the verdicts wrong.
	Warnings []string
}

// Change is a lock whose verdict, holder or reason changed, or which was
// deleted (Deleted, with the last Result known).
type Change struct {
	Result  Result
	Deleted bool
}

// NoLeaseError says a lock Lease does not exist: the state was never
// initialised (or lives elsewhere), so nothing is locked.
type NoLeaseError struct{ Namespace, Name string }

func (e *NoLeaseError) Error() string {
	return fmt.Sprintf("no lock Lease %s in namespace %q: nothing holds this state", e.Name, e.Namespace)
}

// ActiveJobName is the name of the object's active runner Job, "" when
// none is.
func (r Result) ActiveJobName() string { return r.ActiveJob.name() }
