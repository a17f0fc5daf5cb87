package inspect

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
)

// owners maps lock suffixes to CAPTF objects. A suffix is only ever
// accepted for an object whose own suffix, recomputed, equals it.
type owners struct {
	bySuffix map[string]object.Ref // "<namespace>/<suffix>"
	kinds    map[string]KindList   // by Kind name
}

func newOwners(lists []KindList) *owners {
	o := &owners{bySuffix: map[string]object.Ref{}, kinds: map[string]KindList{}}
	for _, l := range lists {
		o.kinds[l.Kind.Name] = l
		for r := range l.Objects {
			o.bySuffix[r.Namespace+"/"+r.Suffix()] = r
		}
	}
	return o
}

// resolve finds the object a lock belongs to: the object whose suffix is
// the one in the Lease's name. Candidates, in order: the listed objects;
// the Lease's CAPTF owner labels; the holder host read as an unhashed
// runner pod name, which carries the kind code and the object name. The
// last two still work when the object was deleted or its kind is not
// served, and each is accepted only when its suffix, recomputed, is the
// name's. When none matches, the string says why. The warnings name owner
// labels that point elsewhere: shown, never followed.
func (o *owners) resolve(l Lease) (*Owner, string, []string) {
	ns := l.Namespace
	var warnings []string
	labelled, labelledOK := object.KindByName(l.Labels[LabelOwnerKind])
	labelRef := object.Ref{Kind: labelled, Namespace: ns, Name: l.Labels[LabelOwnerName]}
	if labelledOK && labelRef.Suffix() != l.Suffix && !hashedLabelOf(labelRef.Name, o.bySuffix[ns+"/"+l.Suffix]) {
		warnings = append(warnings, fmt.Sprintf("its owner labels name %s %s, whose lock this Lease's name is not; CAPTF finds a lock by its name only, so the labels are ignored", labelled.Name, labelRef.Name))
	}
	if r, ok := o.bySuffix[ns+"/"+l.Suffix]; ok {
		yes := true
		m := o.kinds[r.Kind.Name].Objects[r]
		return &Owner{Ref: r, UID: m.UID, Exists: &yes, Deleting: m.Deleting, Via: "object", Cluster: ClusterOf(r.Kind, m)}, "", warnings
	}
	if labelledOK && labelRef.Suffix() == l.Suffix && ValidName(labelRef.Name) {
		return &Owner{Ref: labelRef, Exists: o.exists(labelRef), Via: "lease labels"}, "", warnings
	}
	why := "no CAPTF object owns suffix " + l.Suffix
	if l.Info != nil && l.HostErr == nil {
		if p, err := runner.ParsePodName(l.Host); err == nil && p.Kind != nil {
			switch r := (object.Ref{Kind: *p.Kind, Namespace: ns, Name: p.NameSegment}); {
			case r.Suffix() != l.Suffix:
			case !ValidName(r.Name):
				// Whoever wrote the lock chose both the Lease name and Who;
				// a name no object can have is never trusted as an owner.
				why += "; the holder host names an object whose suffix it is, but that name is not a valid Kubernetes object name, so it is not trusted"
			default:
				return &Owner{Ref: r, Exists: o.exists(r), Via: "holder pod name"}, "", warnings
			}
		}
	}
	switch {
	case o.noneServed():
		why += " (the cluster serves none of CAPTF's kinds)"
	case len(o.unreadable(nil)) > 0:
		why += " among the objects that could be read"
	}
	return nil, why, warnings
}

// hashedLabelOf is true when name is the hashed owner-name label CAPTF
// writes for ref's object (its name is longer than 63 characters).
// With the object unknown, a 16-hex label may be such a hash: no warning.
func hashedLabelOf(name string, ref object.Ref) bool {
	if ref.Name == "" {
		return shortHash.MatchString(name)
	}
	return len(ref.Name) > 63 && object.ShortHash(ref.Name) == name
}

var shortHash = regexp.MustCompile(`^[0-9a-f]{16}$`)

// ValidName is whether s can be a Kubernetes object's name (a DNS-1123
// subdomain), the test any name taken from holder-written text must pass.
func ValidName(s string) bool { return len(validation.IsDNS1123Subdomain(s)) == 0 }

// exists says whether a resolved object is there: nil when its kind could
// not be listed, false when the kind is not served or the object is not
// among those listed.
func (o *owners) exists(r object.Ref) *bool {
	l := o.kinds[r.Kind.Name]
	if l.Err != nil {
		return nil
	}
	found := l.Served && o.bySuffix[r.Namespace+"/"+r.Suffix()] == r
	return &found
}

func (o *owners) noneServed() bool {
	for _, l := range o.kinds {
		if l.Served {
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
		if l := o.kinds[k.Name]; l.Err != nil && (owner == nil || owner.Ref.Kind == k) {
			out = append(out, k.Resource)
		}
	}
	return out
}
