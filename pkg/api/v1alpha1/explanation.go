package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ExplanationKind is the kind of explain's output.
const ExplanationKind = "Explanation"

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Explanation is `kubectl captf explain`: CAPTF's reasoning about one lock,
// step by step, what the controller does next and what to do.
type Explanation struct {
	metav1.TypeMeta `json:",inline"`
	// Metadata is the lock Lease's (name and namespace only when it does
	// not exist).
	metav1.ObjectMeta `json:"metadata"`

	Object *ObjectRef `json:"object"`
	// Cluster is the Cluster API Cluster the object belongs to, as a
	// Lock's cluster; empty when it names none.
	Cluster     string    `json:"cluster"`
	Lock        *LockInfo `json:"lock"`
	Holder      *Holder   `json:"holder"`
	Verdict     Verdict   `json:"verdict"`
	Reason      string    `json:"reason"`
	CAPTFClears bool      `json:"captfClears"`
	// CAPTFDeletesLease is set when CAPTF's controller deletes the lock
	// Lease itself, without a Job and whoever holds it; null when it does
	// not.
	CAPTFDeletesLease *LeaseDeletion `json:"captfDeletesLease"`
	// Steps are the controller's checks, in its order.
	Steps []Step `json:"steps"`
	// ControllerAction is what CAPTF's controller does next.
	ControllerAction string `json:"controllerAction"`
	// Advice lists what fixes or investigates it: commands, each with the
	// comment that says when to run it.
	Advice []Advice `json:"advice"`
	// Disagreement says where the object's condition contradicts what is
	// observed now; empty when they agree.
	Disagreement string  `json:"disagreement,omitempty"`
	Context      Context `json:"context"`
}

// Step is one check of the controller.
type Step struct {
	Check    string `json:"check"`
	Observed string `json:"observed"`
	Result   string `json:"result"`
}

// Context is what else was read about the object, never written.
type Context struct {
	// StateReadable is the object's condition, null when it has none.
	StateReadable *Condition `json:"stateReadable"`
	// Events are the latest ForceUnlocked and StateLocked events about it.
	Events []EventSummary `json:"events"`
	// RunnerEvents are the latest events about a Stale lock's runner pod
	// or its Job (Killing, Evicted, Preempting, NodeNotReady, …).
	RunnerEvents []EventSummary `json:"runnerEvents,omitempty"`
	// ActiveJob is the object's active runner Job, as CAPTF picks it from
	// the Jobs (status.activeJob when the Jobs cannot be read); null when
	// none is active.
	ActiveJob *ActiveJob `json:"activeJob"`
	// RunLease is CAPTF's captf-run-<suffix> lease, null when absent.
	RunLease *RunLease `json:"runLease"`
	// StateSecrets are the names of the state Secrets (metadata only).
	StateSecrets []string `json:"stateSecrets"`
	// Unreadable says what could not be read, one line each.
	Unreadable []string `json:"unreadable,omitempty"`
}

// ActiveJob has the shape of CAPTF's status.activeJob.
type ActiveJob struct {
	Name      string     `json:"name"`
	Operation string     `json:"operation"`
	Attempt   int32      `json:"attempt"`
	StartTime *time.Time `json:"startTime,omitempty"`
	// From says where it was read: "jobs" or "status.activeJob".
	From string `json:"from"`
}

// Condition is a status condition.
type Condition struct {
	Status             string     `json:"status"`
	Reason             string     `json:"reason"`
	Message            string     `json:"message"`
	LastTransitionTime *time.Time `json:"lastTransitionTime"`
}

// EventSummary is one Event. Events are not authenticated: whoever may
// create Events in the namespace can write any of these fields.
type EventSummary struct {
	Reason string     `json:"reason"`
	Type   string     `json:"type"`
	Note   string     `json:"note"`
	Time   *time.Time `json:"time"`
	Count  int32      `json:"count"`
	// ReportingController and ReportingInstance are who the Event says
	// reported it (events.k8s.io/v1; core/v1's source component and host
	// where only core/v1 events could be read).
	ReportingController string `json:"reportingController,omitempty"`
	ReportingInstance   string `json:"reportingInstance,omitempty"`
}

// RunLease is CAPTF's run lease: which Job may run for the object.
type RunLease struct {
	Name       string `json:"name"`
	Holder     string `json:"holder"`
	Op         string `json:"op"`
	AcquiredAt string `json:"acquiredAt"`
}

// SetTypeMeta sets the explanation's apiVersion and kind.
func (in *Explanation) SetTypeMeta() {
	in.APIVersion, in.Kind = SchemeGroupVersion.String(), ExplanationKind
}
