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
		event, l, ok := v.change(s.lock, s.deleted)
		if ok != s.ok || event != s.event || (ok && l.Verdict != s.verdict) {
			t.Errorf("step %d: got %s %s %v, want %s %s %v", i, event, l.Verdict, ok, s.event, s.verdict, s.ok)
		}
	}
}

// Without a filter every change is printed; a lock first seen is ADDED.
func TestWatchViewUnfiltered(t *testing.T) {
	v := newWatchView(nil)
	v.initial([]v1alpha1.Lock{lockOf("a", v1alpha1.Live)})
	if e, _, ok := v.change(lockOf("a", v1alpha1.Stale), false); !ok || e != eventModified {
		t.Errorf("a: %s %v", e, ok)
	}
	if e, _, ok := v.change(lockOf("b", v1alpha1.Unlocked), false); !ok || e != eventAdded {
		t.Errorf("b: %s %v", e, ok)
	}
	if e, l, ok := v.change(lockOf("a", v1alpha1.Stale), true); !ok || e != eventDeleted || l.Name != "a" {
		t.Errorf("a deleted: %s %v", e, ok)
	}
}
