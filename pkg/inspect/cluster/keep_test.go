package cluster

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// Read and ReadLock keep the same owners in full (inspect.KeepInFull), so
// that locks and explain decide every lock alike: the owner of a held lock,
// and a deleting owner whatever its lock's state (CAPTF's Retain deletes
// the Lease held or not); not the owner of a free lock otherwise.
func TestReadAndReadLockKeepTheSameOwners(t *testing.T) {
	retain := func(r object.Ref) *unstructured.Unstructured {
		u := deleting(captfObject(r, nil))
		_ = unstructured.SetNestedField(u.Object, "Retain", "spec", "deletionPolicy")
		return u
	}
	free := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "free"}
	freeGone := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "free-retained"}
	heldGone := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "held-retained"}
	_, r := newReader(t,
		lockLease(free, nil, nil), captfObject(free, nil),
		lockLease(freeGone, nil, nil), retain(freeGone),
		heldLease(heldGone, "alice@laptop"), retain(heldGone))
	snap, rep := readAll(t, r, inspect.Scope{})
	for _, c := range []struct {
		ref     object.Ref
		full    bool
		deletes bool
	}{{free, false, false}, {freeGone, true, true}, {heldGone, true, true}} {
		if _, kept := snap.Objects[c.ref]; kept != c.full {
			t.Errorf("%s kept in full: %v, want %v", c.ref, kept, c.full)
		}
		all := resultOf(t, rep, "default", lockName(c.ref))
		oneSnap, one := readOne(t, r, "default", lockName(c.ref))
		if _, kept := oneSnap.Objects[c.ref]; kept != c.full {
			t.Errorf("ReadLock: %s kept in full: %v, want %v", c.ref, kept, c.full)
		}
		if !reflect.DeepEqual(one.Decision, all.Decision) {
			t.Errorf("%s: Read decides %s %q %+v, ReadLock %s %q %+v", c.ref, all.Decision.Verdict, all.Decision.Reason, all.Decision.DeletesLease,
				one.Decision.Verdict, one.Decision.Reason, one.Decision.DeletesLease)
		}
		if d := all.Decision.DeletesLease; (d != nil) != c.deletes || (d != nil && d.Path != jobgate.PathRetain) {
			t.Errorf("%s: deletesLease %+v, want Retain: %v", c.ref, d, c.deletes)
		}
	}
}
