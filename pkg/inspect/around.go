package inspect

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
)

// Around is what surrounds one lock, as the reading layer read it for
// explain: explain shows it and reads nothing itself. Each read that
// failed is one line in Unreadable, in the order object, events, run
// lease, state Secrets; never a guess.
type Around struct {
	// Object is the CAPTF object in full; nil when it is gone, could not
	// be read, or none is known.
	Object *unstructured.Unstructured
	// ObjectEvents are the Events about the object (by its kind and
	// name), RunnerEvents those about its holder pod and that pod's Job,
	// whatever their reason.
	ObjectEvents, RunnerEvents []Event
	// RunLease is CAPTF's captf-run-<suffix> Lease; nil when it does not
	// exist or could not be read.
	RunLease *coordinationv1.Lease
	// SecretNames are the names of the Secrets labelled with the lock's
	// suffix, read as metadata only: the plugin never reads their data.
	SecretNames []string
	Unreadable  []string
}

// Event is one Event, from events.k8s.io/v1 or core/v1 alike.
type Event struct {
	// Kind and Name are the object it is about (regarding, or
	// involvedObject).
	Kind, Name string
	Summary    v1alpha1.EventSummary
}
