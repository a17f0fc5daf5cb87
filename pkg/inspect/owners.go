package inspect

import (
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
)

// owners maps lock suffixes to CAPTF objects. A suffix is only ever
// accepted for an object whose own suffix, recomputed, equals it.
type owners struct {
	bySuffix map[string]object.Ref // "<namespace>/<suffix>"
	kinds    map[string]kindList   // by Kind name
}

func newOwners(lists []kindList) *owners {
	o := &owners{bySuffix: map[string]object.Ref{}, kinds: map[string]kindList{}}
	for _, l := range lists {
		o.kinds[l.kind.Name] = l
		for _, r := range l.names {
			o.bySuffix[r.Namespace+"/"+r.Suffix()] = r
		}
	}
	return o
}

// resolve finds the object a lock belongs to. Candidates, in order: the
// listed objects; the Lease's CAPTF owner labels; the holder host read as
// an unhashed runner pod name, which carries the kind code and the object
// name. The last two still work when the object was deleted or its kind is
// not served. When none matches, the string says why.
func (o *owners) resolve(l Lease) (*Owner, string) {
	ns := l.Lease.Namespace
	if r, ok := o.bySuffix[ns+"/"+l.Suffix]; ok {
		yes := true
		return &Owner{Ref: r, UID: o.kinds[r.Kind.Name].uids[r], Exists: &yes, Via: "object"}, ""
	}
	if k, ok := object.KindByName(l.Lease.Labels[LabelOwnerKind]); ok {
		if r := (object.Ref{Kind: k, Namespace: ns, Name: l.Lease.Labels[LabelOwnerName]}); r.Suffix() == l.Suffix {
			return &Owner{Ref: r, Exists: o.exists(r), Via: "lease labels"}, ""
		}
	}
	if l.Info != nil && l.HostErr == nil {
		if p, err := runner.ParsePodName(l.Host); err == nil && p.Kind != nil {
			if r := (object.Ref{Kind: *p.Kind, Namespace: ns, Name: p.NameSegment}); r.Suffix() == l.Suffix {
				return &Owner{Ref: r, Exists: o.exists(r), Via: "holder pod name"}, ""
			}
		}
	}
	why := "no CAPTF object owns suffix " + l.Suffix
	switch {
	case o.noneServed():
		why += " (the cluster serves none of CAPTF's kinds)"
	case len(o.unreadable(nil)) > 0:
		why += " among the objects that could be read"
	}
	return nil, why
}

// exists says whether a resolved object is there: nil when its kind could
// not be listed, false when the kind is not served or the object is not
// among those listed.
func (o *owners) exists(r object.Ref) *bool {
	l := o.kinds[r.Kind.Name]
	if l.err != nil {
		return nil
	}
	found := l.served && o.bySuffix[r.Namespace+"/"+r.Suffix()] == r
	return &found
}

func (o *owners) noneServed() bool {
	for _, l := range o.kinds {
		if l.served {
			return false
		}
	}
	return true
}

// unreadable names the kinds whose list failed that matter to an owner:
// its own kind, or every kind when there is no owner.
func (o *owners) unreadable(owner *Owner) []string {
	var out []string
	for _, k := range object.Kinds {
		if l := o.kinds[k.Name]; l.err != nil && (owner == nil || owner.Ref.Kind == k) {
			out = append(out, k.Resource)
		}
	}
	return out
}
