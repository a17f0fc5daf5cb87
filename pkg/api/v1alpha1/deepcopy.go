package v1alpha1

import "time"

// deepcopy-gen writes the deep copies of this package's types into
// zz_generated.deepcopy.go, except for one thing it cannot copy: a
// *time.Time, because time.Time has no DeepCopyInto. The five types that
// hold one have their DeepCopyInto written here (deepcopy-gen sees them and
// generates only their DeepCopy, and calls them from every type holding
// them). TestDeepCopySharesNothing fills every field of every type,
// these included, and fails when a copy shares a pointer, slice or map
// with its original.

// DeepCopyInto copies the death into out.
func (in *Death) DeepCopyInto(out *Death) {
	*out = *in
	out.ExitCode = copyPtr(in.ExitCode)
	out.Signal = copyPtr(in.Signal)
	out.FinishedAt = copyPtr(in.FinishedAt)
}

// DeepCopyInto copies the lock info into out.
func (in *LockInfo) DeepCopyInto(out *LockInfo) {
	*out = *in
	out.Created = copyPtr(in.Created)
}

// DeepCopyInto copies the active Job into out.
func (in *ActiveJob) DeepCopyInto(out *ActiveJob) {
	*out = *in
	out.StartTime = copyPtr(in.StartTime)
}

// DeepCopyInto copies the condition into out.
func (in *Condition) DeepCopyInto(out *Condition) {
	*out = *in
	out.LastTransitionTime = copyPtr(in.LastTransitionTime)
}

// DeepCopyInto copies the event into out.
func (in *EventSummary) DeepCopyInto(out *EventSummary) {
	*out = *in
	out.Time = copyPtr(in.Time)
}

// copyPtr returns a pointer to a copy of *p, or nil. It copies a
// *time.Time whole: a time.Time is a value, and the *time.Location it
// points to is never changed.
func copyPtr[T int32 | time.Time](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
