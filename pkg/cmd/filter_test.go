package cmd

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
)

func lockOf(name string, v v1alpha1.Verdict) v1alpha1.Lock {
	return v1alpha1.Lock{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Verdict: v}
}

func TestParseVerdicts(t *testing.T) {
	f, err := parseVerdicts([]string{"Stale", "Foreign"})
	if err != nil || len(f) != 2 || !f[v1alpha1.Stale] || !f[v1alpha1.Foreign] {
		t.Fatalf("parseVerdicts: %v %v", f, err)
	}
	if f, err := parseVerdicts(nil); err != nil || f != nil {
		t.Fatalf("no values: %v %v", f, err)
	}
	for _, bad := range []string{"stale", "", "Gone", " Stale"} {
		_, err := parseVerdicts([]string{"Live", bad})
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "Unlocked, Live, Stale, Foreign, Unknown") {
			t.Errorf("%q: want a one-line error naming the verdicts, got %v", bad, err)
		}
	}
}

func TestVerdictFilter(t *testing.T) {
	locks := []v1alpha1.Lock{lockOf("a", v1alpha1.Live), lockOf("b", v1alpha1.Stale), lockOf("c", v1alpha1.Foreign), lockOf("d", v1alpha1.Stale)}
	f, _ := parseVerdicts([]string{"Stale"})
	got := f.filter(locks)
	if len(got) != 2 || got[0].Name != "b" || got[1].Name != "d" {
		t.Fatalf("filter: %v", got)
	}
	if got := verdictFilter(nil).filter(locks); len(got) != 4 {
		t.Fatalf("no filter keeps all: %v", got)
	}
}

// A filtered watch reports what the API server reports for a watch with a
// selector: entering is ADDED, leaving is DELETED with the object as last
// shown, and changes outside are not printed.
func TestWatchViewFiltered(t *testing.T) {
	f, _ := parseVerdicts([]string{"Stale"})
	v := newWatchView(f)
	shown := v.initial([]v1alpha1.Lock{lockOf("a", v1alpha1.Live), lockOf("b", v1alpha1.Stale)})
	if len(shown) != 1 || shown[0].Name != "b" {
		t.Fatalf("initial: %v", shown)
	}
	type step struct {
		lock    v1alpha1.Lock
		deleted bool
		event   string
		verdict v1alpha1.Verdict
		ok      bool
	}
	for i, s := range []step{
		{lockOf("a", v1alpha1.Stale), false, eventAdded, v1alpha1.Stale, true},
		{lockOf("b", v1alpha1.Unlocked), false, eventDeleted, v1alpha1.Stale, true},
		{lockOf("b", v1alpha1.Live), false, "", "", false},
		{lockOf("a", v1alpha1.Stale), false, eventModified, v1alpha1.Stale, true},
		{lockOf("b", v1alpha1.Live), true, "", "", false},
		{lockOf("a", v1alpha1.Stale), true, eventDeleted, v1alpha1.Stale, true},
		{lockOf("c", v1alpha1.Foreign), false, "", "", false},
	} {
		event, l, ok := v.change(s.lock, s.deleted, true)
		if ok != s.ok || event != s.event || (ok && l.Verdict != s.verdict) {
			t.Errorf("step %d: got %s %s %v, want %s %s %v", i, event, l.Verdict, ok, s.event, s.verdict, s.ok)
		}
	}
}

// Without a filter every change is printed; a lock first seen is ADDED.
func TestWatchViewUnfiltered(t *testing.T) {
	v := newWatchView(nil)
	v.initial([]v1alpha1.Lock{lockOf("a", v1alpha1.Live)})
	if e, _, ok := v.change(lockOf("a", v1alpha1.Stale), false, true); !ok || e != eventModified {
		t.Errorf("a: %s %v", e, ok)
	}
	if e, _, ok := v.change(lockOf("b", v1alpha1.Unlocked), false, true); !ok || e != eventAdded {
		t.Errorf("b: %s %v", e, ok)
	}
	if e, l, ok := v.change(lockOf("a", v1alpha1.Stale), true, true); !ok || e != eventDeleted || l.Name != "a" {
		t.Errorf("a deleted: %s %v", e, ok)
	}
}

// With --capi-cluster, a shown lock whose object leaves the Cluster is
// DELETED, as last shown; one never shown outside it is not printed; one
// that joins it is ADDED.
func TestWatchViewCluster(t *testing.T) {
	v := newWatchView(nil)
	v.initial([]v1alpha1.Lock{lockOf("a", v1alpha1.Live)})
	if e, l, ok := v.change(lockOf("a", v1alpha1.Stale), false, false); !ok || e != eventDeleted || l.Verdict != v1alpha1.Live {
		t.Errorf("a leaves: %s %s %v", e, l.Verdict, ok)
	}
	if e, _, ok := v.change(lockOf("b", v1alpha1.Stale), false, false); ok {
		t.Errorf("b outside: printed %s", e)
	}
	if e, _, ok := v.change(lockOf("b", v1alpha1.Stale), false, true); !ok || e != eventAdded {
		t.Errorf("b joins: %s %v", e, ok)
	}
}

// --capi-cluster keeps the locks of one Cluster API Cluster's objects,
// with the same requests as without it; a Cluster no object names lists
// nothing, said as kubectl says it; a name no Cluster can have is an
// error.
func TestLocksCAPICluster(t *testing.T) {
	f, srv := verdictsWorld().factory(t)
	all := captf(t, f, "locks", "-o", "name")
	before := len(srv.Requests())
	res := captf(t, f, "locks", "--capi-cluster", "prod", "-o", "name")
	if res.code != 0 || res.out != "lease.coordination.k8s.io/lock-tfstate-default-757a6ceac8aaae20-c\nlease.coordination.k8s.io/lock-tfstate-default-d980a2553508a5e1-c\n" &&
		res.out != "lease.coordination.k8s.io/lock-tfstate-default-d980a2553508a5e1-c\nlease.coordination.k8s.io/lock-tfstate-default-757a6ceac8aaae20-c\n" {
		t.Errorf("the locks of Cluster prod: exit %d\n%s%s(all: %s)", res.code, res.out, res.err, all.out)
	}
	if n := len(srv.Requests()) - before; n != before {
		t.Errorf("--capi-cluster made %d requests, without it %d", n, before)
	}
	res = captf(t, f, "locks", "--capi-cluster", "nowhere")
	if res.code != 0 || res.out != "" || !strings.HasPrefix(res.err, "No resources found in ") {
		t.Errorf("an unknown Cluster: exit %d, out %q, err %q", res.code, res.out, res.err)
	}
	res = captf(t, f, "locks", "--capi-cluster", "a/b")
	if res.code != 1 || !strings.Contains(res.err, `error: --capi-cluster "a/b" is not a Cluster's name`) {
		t.Errorf("an invalid name: exit %d, err %q", res.code, res.err)
	}
}
