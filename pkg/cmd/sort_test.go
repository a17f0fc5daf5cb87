package cmd

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
)

func names(locks []v1alpha1.Lock) string {
	var n []string
	for _, l := range locks {
		n = append(n, l.Name)
	}
	return strings.Join(n, ",")
}

func TestSortByCreated(t *testing.T) {
	at := func(s string) *time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return &tm
	}
	locks := []v1alpha1.Lock{
		{ObjectMeta: metav1.ObjectMeta{Name: "late"}, Lock: &v1alpha1.LockInfo{Created: at("2026-09-26T15:53:38.9Z")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "free"}},
		// A longer fraction, earlier: a string order would put it after "late".
		{ObjectMeta: metav1.ObjectMeta{Name: "early"}, Lock: &v1alpha1.LockInfo{Created: at("2026-09-26T15:53:38.315668626Z")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "nocreated"}, Lock: &v1alpha1.LockInfo{}},
		{ObjectMeta: metav1.ObjectMeta{Name: "earliest"}, Lock: &v1alpha1.LockInfo{Created: at("2025-01-01T00:00:00Z")}},
	}
	for _, expr := range []string{".lock.created", "lock.created", "{.lock.created}", "{lock.created}"} {
		s, err := newLockSorter(expr)
		if err != nil {
			t.Fatal(err)
		}
		l := append([]v1alpha1.Lock(nil), locks...)
		if err := s.sort(l); err != nil {
			t.Fatal(err)
		}
		// Missing (no lock) and null (created: null) come first, in their order.
		if got, want := names(l), "free,nocreated,earliest,early,late"; got != want {
			t.Errorf("%s: got %s, want %s", expr, got, want)
		}
	}
}

func TestSortByNameNaturalAndStable(t *testing.T) {
	mk := func(name string, v v1alpha1.Verdict) v1alpha1.Lock {
		return v1alpha1.Lock{ObjectMeta: metav1.ObjectMeta{Name: name}, Verdict: v}
	}
	locks := []v1alpha1.Lock{mk("web-10", v1alpha1.Stale), mk("web-2", v1alpha1.Live), mk("a", v1alpha1.Stale), mk("b", v1alpha1.Foreign)}
	s, _ := newLockSorter(".metadata.name")
	if err := s.sort(locks); err != nil {
		t.Fatal(err)
	}
	if got, want := names(locks), "a,b,web-2,web-10"; got != want {
		t.Errorf("by name: got %s, want %s", got, want)
	}
	s, _ = newLockSorter(".verdict")
	if err := s.sort(locks); err != nil {
		t.Fatal(err)
	}
	if got, want := names(locks), "b,web-2,a,web-10"; got != want {
		t.Errorf("by verdict, stable: got %s, want %s", got, want)
	}
}

func TestSortByErrors(t *testing.T) {
	if _, err := newLockSorter("{.a}{.b}"); err == nil {
		t.Error("two expressions: want an error")
	}
	if _, err := newLockSorter(".items[?(@.x"); err == nil {
		t.Error("unparsable: want an error")
	}
	s, err := newLockSorter(".nosuchfield")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.sort([]v1alpha1.Lock{{}}); err == nil || !strings.Contains(err.Error(), "couldn't find any field") {
		t.Errorf("a field no item has: %v", err)
	}
	if err := s.sort(nil); err != nil {
		t.Errorf("an empty list sorts: %v", err)
	}
	if s, _ := newLockSorter(""); s != nil || s.sort([]v1alpha1.Lock{{}}) != nil {
		t.Error("no --sort-by: no sorter, no error")
	}
}

func TestNaturalLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{
		{"a2", "a10", true}, {"a10", "a2", false}, {"a", "b", true}, {"a", "a1", true},
		{"a01", "a1", false}, {"a1", "a01", true}, {"x", "x", false}, {"1.11.4", "1.12.6", true},
	} {
		if got := naturalLess(c.a, c.b); got != c.less {
			t.Errorf("naturalLess(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
