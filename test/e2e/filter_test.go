package e2e

import (
	"bufio"
	"context"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// leaseNames are the items' namespace/name, in order.
func leaseNames(list *v1alpha1.LockList) []string {
	var out []string
	for _, l := range list.Items {
		out = append(out, l.Namespace+"/"+l.Name)
	}
	return out
}

// --verdict keeps the same items, in the same order, as filtering the
// unfiltered JSON would, on every output format and across contexts.
func TestLocksVerdictFilter(t *testing.T) {
	seedVerdicts(t)
	kc := kubeconfigIn(t, verdictsNS)
	all := locksJSONFrom(t, captf(t, kc, "locks", "-A", "-o", "json").out)
	want := map[v1alpha1.Verdict][]string{}
	for _, l := range all.Items {
		want[l.Verdict] = append(want[l.Verdict], l.Namespace+"/"+l.Name)
	}
	if len(want[v1alpha1.Stale]) == 0 || len(want[v1alpha1.Foreign]) == 0 {
		t.Fatalf("the seed has no Stale or Foreign lock: %v", want)
	}

	res := captf(t, kc, "locks", "--verdict", "Stale", "-A", "-o", "json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.err)
	}
	if got := leaseNames(locksJSONFrom(t, res.out)); strings.Join(got, " ") != strings.Join(want[v1alpha1.Stale], " ") {
		t.Errorf("--verdict Stale -A -o json:\n got %v\nwant %v", got, want[v1alpha1.Stale])
	}

	// Comma-separated and repeated are the same; the list keeps its order.
	var staleForeign []string
	for _, l := range all.Items {
		if l.Verdict == v1alpha1.Stale || l.Verdict == v1alpha1.Foreign {
			staleForeign = append(staleForeign, l.Namespace+"/"+l.Name)
		}
	}
	for _, args := range [][]string{{"--verdict", "Stale,Foreign"}, {"--verdict", "Foreign", "--verdict", "Stale"}, {"--verdict=Stale,Foreign,Stale"}} {
		res := captf(t, kc, append([]string{"locks", "-A", "-o", "json"}, args...)...)
		if got := leaseNames(locksJSONFrom(t, res.out)); strings.Join(got, " ") != strings.Join(staleForeign, " ") {
			t.Errorf("%v:\n got %v\nwant %v", args, got, staleForeign)
		}
	}

	// Every other format, in namespace verdicts.
	var nsStale []string
	for _, l := range all.Items {
		if l.Namespace == verdictsNS && l.Verdict == v1alpha1.Stale {
			nsStale = append(nsStale, l.Name)
		}
	}
	lines := func(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }
	for _, c := range []struct {
		args  []string
		check func(out string) bool
	}{
		{[]string{"-o", "name"}, func(out string) bool {
			var names []string
			for _, n := range nsStale {
				names = append(names, "lease.coordination.k8s.io/"+n)
			}
			return strings.Join(lines(out), " ") == strings.Join(names, " ")
		}},
		{[]string{"-o", "jsonpath={range .items[*]}{.metadata.name}={.verdict}{\"\\n\"}{end}"}, func(out string) bool {
			var want []string
			for _, n := range nsStale {
				want = append(want, n+"=Stale")
			}
			return strings.Join(lines(out), " ") == strings.Join(want, " ")
		}},
		{[]string{"-o", "go-template={{range .items}}{{.metadata.name}}={{.verdict}}\n{{end}}"}, func(out string) bool {
			var want []string
			for _, n := range nsStale {
				want = append(want, n+"=Stale")
			}
			return strings.Join(lines(out), " ") == strings.Join(want, " ")
		}},
		{[]string{"-o", "yaml"}, func(out string) bool {
			return strings.Count(out, "\n  verdict: Stale\n") == len(nsStale) && !regexp.MustCompile(`\n  verdict: (Live|Foreign|Unknown|Unlocked)\n`).MatchString(out)
		}},
		{nil, func(out string) bool {
			l := lines(out)
			if len(l) != len(nsStale)+1 || !strings.HasPrefix(l[0], "OBJECT") {
				return false
			}
			for _, row := range l[1:] {
				if f := strings.Fields(row); len(f) < 2 || f[1] != "Stale" {
					return false
				}
			}
			return true
		}},
		{[]string{"-o", "wide", "--no-headers"}, func(out string) bool {
			l := lines(out)
			for _, row := range l {
				if f := strings.Fields(row); len(f) < 2 || f[1] != "Stale" {
					return false
				}
			}
			return len(l) == len(nsStale)
		}},
	} {
		res := captf(t, kc, append([]string{"locks", "--verdict", "Stale"}, c.args...)...)
		if res.code != 0 || !c.check(res.out) {
			t.Errorf("%v: exit %d\n%s%s", c.args, res.code, res.out, res.err)
		}
	}

	// With --contexts: only the up context's Foreign locks, and the error row.
	res = captf(t, twoContexts(t), "locks", "--contexts", "up,down", "--context-timeout", "10s", "--verdict", "Foreign", "-o", "json")
	list := locksJSONFrom(t, res.out)
	if res.code != 0 || len(list.ContextErrors) != 1 || len(list.Items) == 0 {
		t.Fatalf("--contexts: exit %d, %d items, %v", res.code, len(list.Items), list.ContextErrors)
	}
	for _, l := range list.Items {
		if l.Verdict != v1alpha1.Foreign || l.Context != "up" {
			t.Errorf("--contexts --verdict Foreign: %s %s %s", l.Context, l.Name, l.Verdict)
		}
	}

	// Nothing left: kubectl's words on stderr, exit 0.
	if res := captf(t, kubeconfigIn(t, "default"), "locks", "--verdict", "Live"); res.code != 0 || res.out != "" || res.err != "No resources found in default namespace.\n" {
		t.Errorf("nothing left: exit %d %q %q", res.code, res.out, res.err)
	}

	// A value that is not a verdict, in any spelling but the verdict's own.
	for _, bad := range []string{"stale", "Stale,Gone", "STALE", ""} {
		res := captf(t, kc, "locks", "--verdict", bad)
		if res.code != 1 || res.out != "" || strings.Count(res.err, "\n") != 1 ||
			!strings.HasPrefix(res.err, "error: --verdict ") || !strings.Contains(res.err, "Unlocked, Live, Stale, Foreign, Unknown") {
			t.Errorf("--verdict %q: exit %d %q %q", bad, res.code, res.out, res.err)
		}
	}
}

// natural is kubectl's natural string order: runs of digits compare as
// numbers (the names here have no leading zeros).
func natural(a, b string) bool {
	chunks := regexp.MustCompile(`[0-9]+|[^0-9]+`)
	ca, cb := chunks.FindAllString(a, -1), chunks.FindAllString(b, -1)
	for i := 0; i < len(ca) && i < len(cb); i++ {
		x, y := ca[i], cb[i]
		if x == y {
			continue
		}
		if x[0] >= '0' && x[0] <= '9' && y[0] >= '0' && y[0] <= '9' {
			if len(x) != len(y) {
				return len(x) < len(y)
			}
			return x < y
		}
		// A digit run and a non-digit run, or two non-digit runs: bytewise
		// from the first difference.
		for k := 0; k < len(x) && k < len(y); k++ {
			if x[k] != y[k] {
				return x[k] < y[k]
			}
		}
		return len(x) < len(y)
	}
	return len(ca) < len(cb)
}

// createdOf is an item's lock.created, zero when absent.
func createdOf(l v1alpha1.Lock) time.Time {
	if l.Lock == nil || l.Lock.Created == nil {
		return time.Time{}
	}
	return *l.Lock.Created
}

func TestLocksSortBy(t *testing.T) {
	seedVerdicts(t)
	kc := kubeconfigIn(t, verdictsNS)
	res := captf(t, kc, "locks", "--sort-by=.lock.created", "-o", "json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.err)
	}
	list := locksJSONFrom(t, res.out)
	if len(list.Items) != len(expectations) {
		t.Fatalf("%d items, want %d", len(list.Items), len(expectations))
	}
	// Locks without a created time first (kubectl puts missing values
	// first), then the oldest first.
	seenTime := false
	for i, l := range list.Items {
		c := createdOf(l)
		if c.IsZero() && seenTime {
			t.Errorf("item %d %s has no created time after one that has", i, l.Name)
		}
		if !c.IsZero() {
			seenTime = true
		}
		if i > 0 && c.Before(createdOf(list.Items[i-1])) {
			t.Errorf("item %d %s (%s) before %s (%s)", i, l.Name, c, list.Items[i-1].Name, createdOf(list.Items[i-1]))
		}
	}
	if !seenTime {
		t.Fatal("no lock has a created time")
	}

	// By name, in -o name; by verdict with a filter, in the table; each
	// a stable sort of the documented order.
	res = captf(t, kc, "locks", "--sort-by", "{.metadata.name}", "-o", "name")
	names := strings.Split(strings.TrimSpace(res.out), "\n")
	if res.code != 0 || len(names) != len(expectations) || !sort.SliceIsSorted(names, func(i, j int) bool { return natural(names[i], names[j]) }) {
		t.Errorf("--sort-by {.metadata.name}: exit %d\n%s", res.code, res.out)
	}
	res = captf(t, kc, "locks", "--sort-by", "verdict", "--verdict", "Stale,Foreign,Live", "--no-headers")
	var got []string
	for _, row := range strings.Split(strings.TrimSpace(res.out), "\n") {
		got = append(got, strings.Fields(row)[1])
	}
	if res.code != 0 || !sort.StringsAreSorted(got) || !strings.Contains(strings.Join(got, " "), "Foreign Live") {
		t.Errorf("--sort-by verdict: exit %d %v\n%s", res.code, got, res.out)
	}

	for _, c := range []struct{ expr, err string }{
		{".nosuchfield", `error: couldn't find any field with path "{.nosuchfield}" in the list of objects`},
		{"{.a}{.b}", "error: --sort-by "},
	} {
		res := captf(t, kc, "locks", "--sort-by", c.expr)
		if res.code != 1 || res.out != "" || !strings.HasPrefix(res.err, c.err) || strings.Count(res.err, "\n") != 1 {
			t.Errorf("--sort-by %s: exit %d %q %q", c.expr, res.code, res.out, res.err)
		}
	}
}

// watchWith starts `locks -w -o json --output-watch-events` with more flags.
func watchWith(t *testing.T, ns string, args ...string) (<-chan event, *exec.Cmd) {
	t.Helper()
	return watchVia(t, kubeconfigIn(t, ns), args...)
}

// With -w, --sort-by orders the first list, and --verdict turns a lock
// leaving the filter into DELETED and one entering it into ADDED; locks
// outside the filter are never printed.
func TestLocksWatchFilterAndSort(t *testing.T) {
	ctx := context.Background()
	ns := "filterwatch"
	demo := newObject(t, ns, object.TerraformCluster, "demo")
	web := newObject(t, ns, object.TerraformMachine, "web-1")
	db := newObject(t, ns, object.TerraformMachine, "db")
	demoHost, webHost := "captf-c-demo-apply-a1-d72d2a-x7k2p", "captf-m-web-1-refresh-a3-0a1b2c-q8w7e"
	now := time.Now()
	for _, l := range []struct {
		r       object.Ref
		who     string
		created time.Time
	}{
		{demo, "root@" + demoHost, now.Add(-1 * time.Hour)}, // Live: its pod runs
		{web, "root@" + webHost, now.Add(-2 * time.Hour)},   // Stale: no pod
		{db, "root@workstation", now.Add(-3 * time.Hour)},   // Foreign
	} {
		id := "11111111-2222-3333-4444-" + strings.Repeat(string(l.r.Name[0]), 12)
		info := testbed.LockInfo(id, l.who, l.created)
		if _, err := admin.LockLease(ctx, ns, l.r.Suffix(), testbed.BackendLabels(l.r, testbed.ObjectCluster), &id, &info); err != nil {
			t.Fatal(err)
		}
	}
	pod, err := admin.RunnerPod(ctx, demo, demoHost, corev1.PodRunning)
	if err != nil {
		t.Fatal(err)
	}

	// The first list sorted: db (oldest), web-1, demo; not the documented
	// order (demo, db, web-1).
	events, cmd := watchWith(t, ns, "--sort-by=.lock.created")
	var got []string
	for range 3 {
		e := next(t, events, "the initial list")
		got = append(got, e.Type+" "+e.Object.Object.Name+" "+string(e.Object.Verdict))
	}
	if want := "ADDED db Foreign,ADDED web-1 Stale,ADDED demo Live"; strings.Join(got, ",") != want {
		t.Errorf("sorted first list: %v, want %s", got, want)
	}
	if code := interrupt(t, cmd); code != 130 {
		t.Errorf("exit %d after Ctrl-C", code)
	}

	events, cmd = watchWith(t, ns, "--verdict", "Live", "--sort-by=.lock.created")
	if e := next(t, events, "the initial list"); e.Type != "ADDED" || e.Object.Object.Name != "demo" || e.Object.Verdict != v1alpha1.Live {
		t.Fatalf("initial: %s %s %s", e.Type, e.Object.Name, e.Object.Verdict)
	}
	// The first list is printed once the watch is in place: no wait.

	// demo's runner fails: Live -> Stale leaves the filter: DELETED, as last shown.
	pod, err = admin.Kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SetPhase(ctx, pod, corev1.PodFailed); err != nil {
		t.Fatal(err)
	}
	if e := next(t, events, "demo's pod failing"); e.Type != "DELETED" || e.Object.Object.Name != "demo" || e.Object.Verdict != v1alpha1.Live {
		t.Fatalf("after demo's pod failed: %s %s %s", e.Type, e.Object.Object.Name, e.Object.Verdict)
	}
	// web-1's runner appears, running: Stale -> Live enters it: ADDED.
	if _, err := admin.RunnerPod(ctx, web, webHost, corev1.PodRunning); err != nil {
		t.Fatal(err)
	}
	if e := next(t, events, "web-1's pod running"); e.Type != "ADDED" || e.Object.Object.Name != "web-1" || e.Object.Verdict != v1alpha1.Live {
		t.Fatalf("after web-1's pod started: %s %s %s", e.Type, e.Object.Object.Name, e.Object.Verdict)
	}
	// db changes holder but stays Foreign, outside the filter: nothing.
	// Then web-1's lock is deleted: DELETED, and nothing about db before it.
	dbLease, err := admin.Kube.CoordinationV1().Leases(ns).Get(ctx, object.LockLeaseName("default", db.Suffix()), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := "99999999-2222-3333-4444-dddddddddddd"
	dbLease.Spec.HolderIdentity = &id
	dbLease.Annotations["app.terraform.io/lock-info"] = testbed.LockInfo(id, "root@laptop", now)
	if _, err := admin.Kube.CoordinationV1().Leases(ns).Update(ctx, dbLease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Both changes reach the watch in order, through one informer.
	lease := object.LockLeaseName("default", web.Suffix())
	if err := admin.Kube.CoordinationV1().Leases(ns).Delete(ctx, lease, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// web-1's pod was created Pending, then set Running: the watch may
	// show both states, each as its informer saw it (ADDED while
	// Pending, MODIFIED once Running), before the deletion.
	e := next(t, events, "web-1's lock deleted")
	if e.Type == "MODIFIED" && e.Object.Name == lease && e.Object.Verdict == v1alpha1.Live {
		e = next(t, events, "web-1's lock deleted")
	}
	if e.Type != "DELETED" || e.Object.Name != lease || e.Object.Verdict != v1alpha1.Live {
		t.Fatalf("after web-1's lock was deleted: %s %s %s", e.Type, e.Object.Name, e.Object.Verdict)
	}
	if code := interrupt(t, cmd); code != 130 {
		t.Errorf("exit %d after Ctrl-C", code)
	}

	// The table: a header with EVENT, then the first list filtered and
	// sorted: demo (Stale, locked an hour ago), then db (Foreign, locked
	// again just now).
	cmd = exec.Command(plugin, "--kubeconfig", kubeconfigIn(t, ns), "locks", "-w", "--output-watch-events", "--verdict", "Stale,Foreign", "--sort-by", ".lock.created")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	rows := make(chan string, 8)
	go func() {
		defer close(rows)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			rows <- sc.Text()
		}
	}()
	var table []string
	for len(table) < 3 {
		select {
		case r, ok := <-rows:
			if !ok {
				t.Fatalf("the table watch ended after %q", table)
			}
			table = append(table, strings.Join(strings.Fields(r), " "))
		case <-time.After(60 * time.Second):
			t.Fatalf("the table watch printed %q in 60 s", table)
		}
	}
	if !strings.HasPrefix(table[0], "EVENT OBJECT VERDICT") || !strings.HasPrefix(table[1], "ADDED terraformcluster/demo Stale") ||
		!strings.HasPrefix(table[2], "ADDED terraformmachine/db Foreign root@laptop") {
		t.Errorf("table watch:\n%s", strings.Join(table, "\n"))
	}
	if code := interrupt(t, cmd); code != 130 {
		t.Errorf("table watch: exit %d after Ctrl-C", code)
	}
}
