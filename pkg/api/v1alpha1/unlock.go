package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Kind names of unlock's output.
const (
	UnlockResultKind     = "UnlockResult"
	UnlockResultListKind = "UnlockResultList"
)

// Action is what unlock did, or would do.
type Action string

// The actions.
const (
	// ActionUnlocked: the lock was cleared.
	ActionUnlocked Action = "Unlocked"
	// WouldUnlock: a dry run whose guards let the unlock go ahead.
	WouldUnlock Action = "WouldUnlock"
	// AlreadyUnlocked: nobody held the lock; nothing was written.
	AlreadyUnlocked Action = "AlreadyUnlocked"
	// Refused: a guard refused; nothing was written.
	Refused Action = "Refused"
	// Conflict: the Lease changed between the read and the write; the
	// server rejected the write, so nothing was written.
	Conflict Action = "Conflict"
	// Failed: the lock could not be read or written; Message holds the
	// error. Nothing was written.
	Failed Action = "Failed"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// UnlockResult is the outcome of unlocking one lock.
type UnlockResult struct {
	metav1.TypeMeta `json:",inline"`
	// Metadata is the lock Lease's, as read before the write.
	metav1.ObjectMeta `json:"metadata"`

	Object  *ObjectRef `json:"object"`
	Verdict Verdict    `json:"verdict"`
	Reason  string     `json:"reason"`
	// CAPTFDeletesLease is set when CAPTF's controller deletes the lock
	// Lease itself, without a Job and whoever holds it; null when it does
	// not, or the lock could not be read.
	CAPTFDeletesLease *LeaseDeletion `json:"captfDeletesLease"`
	// Lock is the lock as read, null when it was free.
	Lock   *LockInfo `json:"lock"`
	Holder *Holder   `json:"holder"`

	Action  Action `json:"action"`
	DryRun  bool   `json:"dryRun"`
	Message string `json:"message"`
	// Change is the write, made or planned; null when none is due.
	Change *LeaseChange `json:"change"`
	// Event is the name of the Event recorded after the unlock.
	Event string `json:"event,omitempty"`
	// Reconcile is the annotation patched onto the object, when asked.
	Reconcile string `json:"reconcile,omitempty"`
	// Warnings are failures that did not undo the unlock.
	Warnings []string `json:"warnings,omitempty"`
	// Commands are what to run next: the unlock with the flags its guards
	// ask for, a look at the holder, or a reconcile of the object.
	Commands []Advice `json:"commands,omitempty"`
}

// LeaseChange is the unlock's write: the runtimes' own Unlock.
type LeaseChange struct {
	// ResourceVersion the update carries: the write fails if the Lease
	// changed since it was read.
	ResourceVersion string `json:"resourceVersion"`
	// HolderIdentity is set from this value to null.
	HolderIdentity string `json:"holderIdentity"`
	// RemoveAnnotation is the only annotation removed.
	RemoveAnnotation string `json:"removeAnnotation"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// UnlockResultList is the outcome of `unlock --all-stale`.
type UnlockResultList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []UnlockResult `json:"items"`
}

// NewUnlockResultList returns an empty list with its type set.
func NewUnlockResultList() *UnlockResultList {
	l := &UnlockResultList{Items: []UnlockResult{}}
	l.APIVersion, l.Kind = SchemeGroupVersion.String(), UnlockResultListKind
	return l
}

// SetTypeMeta sets the result's apiVersion and kind.
func (in *UnlockResult) SetTypeMeta() {
	in.APIVersion, in.Kind = SchemeGroupVersion.String(), UnlockResultKind
}
