package inspect

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// sortResults applies the order sort.SliceStable gives, ties kept in
// their listed order, whatever the permutation's cycles.
func TestSortResultsIsSliceStable(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		rs := make([]Result, rnd.IntN(300))
		for n := range rs {
			l := Lease{Namespace: fmt.Sprintf("ns-%d", rnd.IntN(4)), Name: fmt.Sprintf("lock-%d", rnd.IntN(6)), ResourceVersion: fmt.Sprint(n)}
			rs[n].Facts.Lease = l
			if rnd.IntN(3) > 0 {
				rs[n].Facts.Owner = &Owner{Ref: object.Ref{Kind: object.Kinds[rnd.IntN(len(object.Kinds))], Namespace: l.Namespace, Name: fmt.Sprintf("o-%d", rnd.IntN(3))}}
			}
		}
		want := append([]Result(nil), rs...)
		sort.SliceStable(want, func(a, b int) bool { return want[a].before(want[b]) })
		sortResults(rs)
		for n := range rs {
			if rs[n].Facts.Lease.ResourceVersion != want[n].Facts.Lease.ResourceVersion {
				t.Fatalf("round %d: at %d got item %s, want %s", round, n, rs[n].Facts.Lease.ResourceVersion, want[n].Facts.Lease.ResourceVersion)
			}
		}
	}
}
