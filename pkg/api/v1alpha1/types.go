package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SchemeGroupVersion is captf.io/v1alpha1.
var SchemeGroupVersion = schema.GroupVersion{Group: "captf.io", Version: "v1alpha1"}

// Verdict is what CAPTF's controller makes of a lock.
type Verdict string

// The verdicts, the same words in every command.
const (
	// Unlocked: the Lease has no holder.
	Unlocked Verdict = "Unlocked"
	// Live: held by one of the object's own runner pods, which is alive.
	Live Verdict = "Live"
	// Stale: held by one of the object's own runner pods, which is gone or finished.
	Stale Verdict = "Stale"
	// Foreign: held by anyone else; no Job of CAPTF's clears it (CAPTF
	// deletes the Lease itself on some deletions: captfDeletesLease).
	Foreign Verdict = "Foreign"
	// Unknown: held, but the holder cannot be identified; no Job of
	// CAPTF's clears it (nor, on some deletions, the Lease: captfDeletesLease).
	Unknown Verdict = "Unknown"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// LockList is the output of `kubectl captf locks`.
type LockList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []Lock `json:"items"`
	// ContextErrors lists the kubeconfig contexts that could not be read,
	// with --contexts or --all-contexts.
	ContextErrors []ContextError `json:"contextErrors,omitempty"`
}

// ContextError is a kubeconfig context whose cluster could not be read.
type ContextError struct {
	Context string `json:"context"`
	Error   string `json:"error"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Lock is one Terraform/OpenTofu lock Lease and CAPTF's view of it.
// It and the types it holds marshal as encoding/json does by default:
// the -o json writer indents the encoder's compact output itself
// (pkg/cmd indentCompact), and a MarshalJSON that wrote spaces outside
// strings would be indented wrongly (review26f n5). metadata is the Lease's own (name, namespace, uid, resourceVersion,
// creationTimestamp, labels).
type Lock struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	// Context is the kubeconfig context read, with --contexts or --all-contexts.
	Context string `json:"context,omitempty"`

	// Workspace and Suffix come from the Lease's labels, or its name.
	Workspace string `json:"workspace"`
	Suffix    string `json:"suffix"`
	// Object is the CAPTF object whose state this is, or null when no
	// object owns the suffix.
	Object *ObjectRef `json:"object"`
	// Cluster is the Cluster API Cluster the object belongs to, in the
	// lock's namespace, as CAPTF names it for its Jobs: the object's
	// cluster.x-k8s.io/cluster-name label, else a TerraformCluster's owner
	// reference to a Cluster (never an owner reference that disagrees
	// with the label). Empty when the object names none, or a name no
	// Cluster can have, or was not listed (deleted, unreadable). The Lease's own cluster-name label,
	// which -l selects on, is the one CAPTF gave the backend when the
	// Lease was written, and a name longer than 63 characters is hashed
	// there.
	Cluster string `json:"cluster"`
	// Lock is null when the Lease is unlocked.
	Lock *LockInfo `json:"lock"`
	// Holder is null when the holder names no host.
	Holder *Holder `json:"holder"`

	Verdict Verdict `json:"verdict"`
	// Reason is one sentence naming the evidence for the verdict.
	Reason string `json:"reason"`
	// CAPTFClears says whether a Job that CAPTF's controller starts will
	// force-unlock the lock: a Stale lock of an existing object, with a
	// consistent ID, whose holder name CAPTF's lock check can read, and
	// that no gate (a pause, a Retain deletion, missing credentials, ...)
	// keeps from getting a Job.
	CAPTFClears bool `json:"captfClears"`
	// CAPTFDeletesLease is set when CAPTF's controller deletes the lock
	// Lease itself, without a Job and whoever holds it, whatever the
	// verdict; null when it does not.
	CAPTFDeletesLease *LeaseDeletion `json:"captfDeletesLease"`
	// ActiveJob is the name of the object's active runner Job, or empty.
	ActiveJob string `json:"activeJob"`
	// Warnings name Lease labels that disagree with its name. CAPTF finds
	// a lock by its name only, so they are shown and never acted on.
	Warnings []string `json:"warnings,omitempty"`
	// Unreadable lists what could not be read for this lock (for example
	// "jobs" when RBAC forbids listing them, or "secrets" when the state
	// Secrets' metadata the decision asked for could not be listed); the
	// fields it feeds are then incomplete.
	Unreadable []string `json:"unreadable,omitempty"`
}

// LeaseDeletion is CAPTF's controller deleting a lock Lease itself: a
// plain delete, with no Job and no look at the holder (its state.DeleteLock).
// A holder that still runs is not stopped by it: its own unlock then
// fails (the Lease is not found), and another client can create a new
// lock and write the state at the same time.
type LeaseDeletion struct {
	// Path is the CAPTF code that deletes it: Retain (deletionPolicy
	// Retain), ExternallyManagedRelease (an object with the
	// cluster.x-k8s.io/managed-by annotation being deleted),
	// CleanupAfterDestroy (after a successful destroy) or
	// CleanupWithoutState (a deletion without state).
	Path string `json:"path"`
	// When says when it happens (for example once no Job of the object runs).
	When string `json:"when"`
	// Why names the evidence and the CAPTF code.
	Why string `json:"why"`
	// Certain is false when it depends on what the plugin could not read
	// or cannot know; when and why say what.
	Certain bool `json:"certain"`
}

// ObjectRef names the CAPTF object a lock belongs to.
type ObjectRef struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Exists is false when the object was deleted (or its kind is not
	// served), null when it could not be read.
	Exists *bool `json:"exists"`
}

// LockInfo is the lock: its ID and the lock-info annotation's fields.
type LockInfo struct {
	// ID is spec.holderIdentity, the ID the backend compares and the one
	// `terraform force-unlock` needs.
	ID string `json:"id"`
	// InfoID is the lock-info annotation's ID; it normally equals ID.
	InfoID    string     `json:"infoID"`
	Operation string     `json:"operation"`
	Who       string     `json:"who"`
	Version   string     `json:"version"`
	Created   *time.Time `json:"created"`
	// InfoError says why the lock info could not be read, when it could not.
	InfoError string `json:"infoError,omitempty"`
}

// Holder is the host that Who names, and the pod of that name if any.
type Holder struct {
	Host string `json:"host"`
	// OwnPod is true when Host is a pod name of the object's own runner Jobs.
	OwnPod bool `json:"ownPod"`
	// Pod is the holder pod's name when Host names a pod that was read.
	Pod         string `json:"pod"`
	PodPhase    string `json:"podPhase"`
	PodExists   bool   `json:"podExists"`
	Terminating bool   `json:"terminating"`
	// Death is why a Stale lock's runner died, as far as the cluster
	// still records it; null for other verdicts.
	Death *Death `json:"death,omitempty"`
}

// Death is the evidence of how a runner ended: its container's
// termination, the pod's own reason, or, once the pod is gone, its Job's
// failure condition.
type Death struct {
	// Summary is one line: "container runner OOMKilled (exit 137)", "Job
	// DeadlineExceeded", or "pod and Job pruned; no record left".
	Summary string `json:"summary"`
	// Container is the runner container's last termination.
	Container  string     `json:"container,omitempty"`
	Reason     string     `json:"reason,omitempty"`
	ExitCode   *int32     `json:"exitCode,omitempty"`
	Signal     *int32     `json:"signal,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	// PodReason and PodMessage are the pod's own (Evicted, DeadlineExceeded).
	PodReason  string `json:"podReason,omitempty"`
	PodMessage string `json:"podMessage,omitempty"`
	Node       string `json:"node,omitempty"`
	// Job and JobCondition are read when the pod is gone.
	Job          string `json:"job,omitempty"`
	JobCondition string `json:"jobCondition,omitempty"`
}
