package v1alpha1

import "k8s.io/apimachinery/pkg/runtime"

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

// DeepCopyInto copies the list into out.
func (in *LockList) DeepCopyInto(out *LockList) {
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Lock, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	out.ContextErrors = append([]ContextError(nil), in.ContextErrors...)
}

// DeepCopyObject implements runtime.Object.
func (in *LockList) DeepCopyObject() runtime.Object {
	out := new(LockList)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the lock into out.
func (in *Lock) DeepCopyInto(out *Lock) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if in.Object != nil {
		o := *in.Object
		if o.Exists != nil {
			e := *o.Exists
			o.Exists = &e
		}
		out.Object = &o
	}
	if in.Lock != nil {
		l := *in.Lock
		if l.Created != nil {
			c := *l.Created
			l.Created = &c
		}
		out.Lock = &l
	}
	if in.Holder != nil {
		h := *in.Holder
		if h.Death != nil {
			d := *h.Death
			h.Death = &d
		}
		out.Holder = &h
	}
	if in.Unreadable != nil {
		out.Unreadable = append([]string(nil), in.Unreadable...)
	}
	if in.Warnings != nil {
		out.Warnings = append([]string(nil), in.Warnings...)
	}
}

// DeepCopyObject implements runtime.Object.
func (in *Lock) DeepCopyObject() runtime.Object {
	out := new(Lock)
	in.DeepCopyInto(out)
	return out
}
