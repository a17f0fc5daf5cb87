package inspect

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// The index gives each owner the active Job that reading every Job gives,
// long names (whose Jobs carry the hash of the name) included, and finds
// a Job by name in its own namespace only.
func TestJobIndexAgreesWithTheWholeList(t *testing.T) {
	long := strings.Repeat("n", 70)
	refs := []object.Ref{
		{Kind: object.TerraformCluster, Namespace: "a", Name: "web"},
		{Kind: object.TerraformMachine, Namespace: "a", Name: "web"},
		{Kind: object.TerraformCluster, Namespace: "b", Name: "web"},
		{Kind: object.TerraformMachinePool, Namespace: "a", Name: long},
		{Kind: object.TerraformCluster, Namespace: "a", Name: "none"},
	}
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var all []*batchv1.Job
	for n, r := range refs[:4] {
		for attempt, fin := range []bool{false, false, true} {
			j := job(r.Namespace, r.Kind.Code+"-"+ownerLabel(r)+"-"+string(rune('a'+attempt)), object.Ref{Kind: r.Kind, Namespace: r.Namespace, Name: ownerLabel(r)}, fin)
			j.CreationTimestamp = metav1.NewTime(start.Add(time.Duration(n*10+attempt) * time.Minute))
			j.OwnerReferences[0].UID = uidOf(r)
			all = append(all, j)
		}
	}
	x := indexJobs(all)
	for _, r := range refs {
		want, got := ActiveJob(all, r, uidOf(r)), ActiveJob(x.of(r), r, uidOf(r))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: index %+v, whole list %+v", r, got, want)
		}
		if r.Name != "none" && (got == nil || !strings.HasSuffix(got.Name, "-b")) {
			t.Errorf("%s: active Job %+v, want the newer unfinished one", r, got)
		}
	}
	if got := x.named("a", all[3].Name); len(got) != 1 || got[0] != all[3] {
		t.Errorf("named: %v", got)
	}
	if got := x.named("b", all[3].Name); len(got) != 0 {
		t.Errorf("a Job found by name in another namespace: %v", got)
	}
}

// The active Job of each of 10,000 objects among 30,000 Jobs (three
// attempts each, as a cluster that keeps finished Jobs has): by reading
// every Job for each lock, as before, and through the index.
func BenchmarkActiveJobs(b *testing.B) {
	var refs []object.Ref
	var all []*batchv1.Job
	for n := range 10000 {
		r := object.Ref{Kind: object.TerraformMachine, Namespace: fmt.Sprintf("team-%03d", n%100), Name: fmt.Sprintf("obj-%05d", n)}
		refs = append(refs, r)
		for attempt := range 3 {
			all = append(all, job(r.Namespace, fmt.Sprintf("captf-m-%s-apply-a%d-d72d2a", r.Name, attempt+1), r, attempt < 2))
		}
	}
	b.Run("every Job", func(b *testing.B) {
		for b.Loop() {
			for _, r := range refs {
				ActiveJob(all, r, uidOf(r))
			}
		}
	})
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			x := indexJobs(all)
			for _, r := range refs {
				ActiveJob(x.of(r), r, uidOf(r))
			}
		}
	})
}
