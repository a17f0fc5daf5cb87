package v1alpha1

// Kind names.
const (
	LockKind     = "Lock"
	LockListKind = "LockList"
)

// NewLockList returns an empty list with its apiVersion and kind set.
func NewLockList() *LockList {
	l := &LockList{Items: []Lock{}}
	l.APIVersion, l.Kind = SchemeGroupVersion.String(), LockListKind
	return l
}

// SetTypeMeta sets the item's apiVersion and kind.
func (in *Lock) SetTypeMeta() {
	in.APIVersion, in.Kind = SchemeGroupVersion.String(), LockKind
}
