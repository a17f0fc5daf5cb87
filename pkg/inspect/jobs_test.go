package inspect

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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

// jobFacts reads the Jobs as CAPTF's bookkeeping does: the newest
// finished apply or destroy decides DestroySucceeded, a failed plan
// newer than both stops it, and the last apply counts only when the
// newest finished apply succeeded (bookkeeping.go applyDestroy,
// reconcile.go lastApplySucceeded).
func TestJobFactsFollowBookkeeping(t *testing.T) {
	r := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "web"}
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	fin := func(name, op string, min int, ok bool) *batchv1.Job {
		j := job("default", name, r, false)
		j.Labels[LabelOp] = op
		typ := batchv1.JobFailed
		if ok {
			typ = batchv1.JobComplete
		}
		j.Status.Conditions = []batchv1.JobCondition{{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(base.Add(time.Duration(min) * time.Minute))}}
		return j
	}
	for _, c := range []struct {
		name      string
		jobs      []*batchv1.Job
		destroyed bool
		lastApply int // minutes; -1 for none
	}{
		{"a destroy succeeded", []*batchv1.Job{fin("d", "destroy", 2, true), fin("a", "apply", 1, true)}, true, 1},
		{"an apply after the destroy", []*batchv1.Job{fin("d", "destroy", 1, true), fin("a", "apply", 2, true)}, false, 2},
		{"a failed plan after the destroy", []*batchv1.Job{fin("d", "destroy", 1, true), fin("p", "plan", 2, false)}, false, -1},
		{"a successful plan after the destroy", []*batchv1.Job{fin("d", "destroy", 1, true), fin("p", "plan", 2, true)}, true, -1},
		{"an unreadable plan after the destroy", []*batchv1.Job{fin("d", "destroy", 1, true), func() *batchv1.Job {
			j := fin("p", "plan", 2, true)
			j.Annotations = map[string]string{"captf.io/plan-unreadable": "true"}
			return j
		}()}, false, -1},
		{"a refresh after the destroy", []*batchv1.Job{fin("d", "destroy", 1, true), fin("r", "refresh", 2, true)}, true, -1},
		{"the newest apply failed", []*batchv1.Job{fin("a1", "apply", 1, true), fin("a2", "apply", 2, false)}, false, -1},
		{"the newest apply succeeded", []*batchv1.Job{fin("a1", "apply", 1, false), fin("a2", "apply", 2, true)}, false, 2},
	} {
		_, destroyed, last := jobFacts(c.jobs)
		switch {
		case destroyed != c.destroyed:
			t.Errorf("%s: destroyed %v", c.name, destroyed)
		case c.lastApply < 0 && last != nil, c.lastApply >= 0 && (last == nil || !last.Equal(base.Add(time.Duration(c.lastApply)*time.Minute))):
			t.Errorf("%s: last apply %v", c.name, last)
		}
	}
}

// An apply Job CAPTF has not bookkept yet, finished or vanished, keeps
// its preamble from releasing an ownerless deletion
// (preamble.go unbookkeptApply).
func TestUnbookkeptApply(t *testing.T) {
	r := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "web"}
	apply := func(finished, bookkept bool) *batchv1.Job {
		j := job("default", "captf-c-web-apply-a1-aaaaaa", r, finished)
		j.Labels[LabelOp] = "apply"
		if bookkept {
			j.Annotations = map[string]string{"captf.io/bookkept": "true"}
		}
		return j
	}
	obj := func(active string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		if active != "" {
			_ = unstructured.SetNestedMap(u.Object, map[string]any{"name": active, "operation": "apply", "attempt": int64(1)}, "status", "activeJob")
		}
		return u
	}
	for _, c := range []struct {
		name string
		own  []*batchv1.Job
		u    *unstructured.Unstructured
		want bool
	}{
		{"none", nil, obj(""), false},
		{"finished, not bookkept", []*batchv1.Job{apply(true, false)}, obj(""), true},
		{"finished, bookkept", []*batchv1.Job{apply(true, true)}, obj(""), false},
		{"running", []*batchv1.Job{apply(false, false)}, obj(""), false},
		{"status names a gone apply", nil, obj("captf-c-web-apply-a2-bbbbbb"), true},
		{"status names a listed apply", []*batchv1.Job{apply(false, false)}, obj("captf-c-web-apply-a1-aaaaaa"), false},
	} {
		if got := UnbookkeptApply(c.own, c.u); got != c.want {
			t.Errorf("%s: %v", c.name, got)
		}
	}
}
