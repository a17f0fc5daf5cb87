package cmd

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// heldAt is a held lock created at c (nil: its created time unreadable).
func heldAt(name string, c *time.Time) v1alpha1.Lock {
	l := lockOf(name, v1alpha1.Foreign)
	l.Lock = &v1alpha1.LockInfo{ID: "id-" + name, Created: c}
	return l
}

func TestAgeFilter(t *testing.T) {
	now := clock
	year9999 := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) *time.Time { c := now.Add(-ago); return &c }
	locks := []v1alpha1.Lock{
		heldAt("old", at(2*time.Hour)),
		heldAt("young", at(10*time.Minute)),
		heldAt("exactly", at(30*time.Minute)),
		heldAt("undated", nil),
		lockOf("free", v1alpha1.Unlocked),
		heldAt("ahead", at(-4*time.Minute)), // a clock a little ahead: a time
		heldAt("future", at(-time.Hour)),    // too far ahead: unknown
		heldAt("year9999", &year9999),       // a holder's Created: 9999-01-01
		heldAt("skew", at(-maxClockSkew)),   // just at the bound: a time
		heldAt("past-skew", at(-maxClockSkew-time.Second)),
	}
	names := func(ls []v1alpha1.Lock) string {
		var n []string
		for _, l := range ls {
			n = append(n, l.Name)
		}
		return strings.Join(n, ",")
	}
	for _, c := range []struct {
		set  bool
		d    time.Duration
		want string
	}{
		{false, 0, "old,young,exactly,undated,free,ahead,future,year9999,skew,past-skew"},
		// Older than 30m: created strictly before now-30m; the held locks
		// that cannot be dated (unreadable, or dated more than
		// maxClockSkew ahead) are kept, the unlocked one has no age.
		{true, 30 * time.Minute, "old,undated,future,year9999,past-skew"},
		{true, 3 * time.Hour, "undated,future,year9999,past-skew"},
		// 0 keeps every held lock created before now, and those it
		// cannot date.
		{true, 0, "old,young,exactly,undated,future,year9999,past-skew"},
	} {
		f, err := newAgeFilter(c.set, c.d, now)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(f.filter(locks)); got != c.want {
			t.Errorf("--older-than %s (set %v): %s, want %s", c.d, c.set, got, c.want)
		}
	}
	_, err := newAgeFilter(true, -5*time.Minute, now)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "--older-than -5m0s is negative") {
		t.Errorf("a negative duration: %v", err)
	}
}

// ageWorld is verdictsWorld with its locks of different ages: the Stale
// web-1 and the Foreign db were taken two hours ago, the Live demo ten
// minutes ago, and the Unknown cache has no readable lock info at all.
func ageWorld() *world {
	w := newWorld("infra")
	w.lock(w.object(object.TerraformCluster, "free"), "", "", "", clock.Add(-3*time.Hour))
	w.lock(w.object(object.TerraformCluster, "demo"), "3c1e9a5b-7d2f-0e4a-8b6c-1f2e3d4c5b6a", "root@captf-c-demo-apply-a1-d72d2a-x7k2p", "", clock.Add(-10*time.Minute))
	w.pod("captf-c-demo-apply-a1-d72d2a-x7k2p", "Running")
	w.lock(w.object(object.TerraformMachine, "web-1"), "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d", "root@captf-m-web-1-apply-a1-0a1b2c-q8w7e", "", clock.Add(-2*time.Hour))
	w.lock(w.object(object.TerraformMachine, "db"), "11111111-2222-3333-4444-555555555555", "alice@laptop", "", clock.Add(-2*time.Hour))
	w.lock(w.object(object.TerraformMachinePool, "cache"), "22222222-3333-4444-5555-666666666666", "", "not json", clock.Add(-time.Minute))
	return w
}

// objectsIn are the OBJECT column of a table, in order.
func objectsIn(table string) []string {
	var out []string
	for i, row := range strings.Split(strings.TrimSpace(table), "\n") {
		if f := strings.Fields(row); i > 0 && len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}

// The check of the README's CronJob: what it finds is printed as usual,
// and the exit code says whether it found anything.
func TestLocksOlderThanExitCode(t *testing.T) {
	check := []string{"locks", "--verdict", "Stale,Foreign,Unknown", "--older-than", "30m", "--exit-code"}
	for _, c := range []struct {
		args []string
		code int
		want string // the OBJECT column, in order
	}{
		// web-1 and db are two hours old; cache's age is unknown, so kept.
		{check, ExitFound, "terraformmachine/db terraformmachine/web-1 terraformmachinepool/cache"},
		// Without --exit-code, the same list and exit 0.
		{check[:len(check)-1], 0, "terraformmachine/db terraformmachine/web-1 terraformmachinepool/cache"},
		// Nothing held for over three hours but the undated lock.
		{[]string{"locks", "--older-than", "3h", "--exit-code"}, ExitFound, "terraformmachinepool/cache"},
		// The Live demo is ten minutes old; free is unlocked, no age.
		{[]string{"locks", "--older-than", "5m", "--verdict", "Live,Unlocked", "--exit-code"}, ExitFound, "terraformcluster/demo"},
		{[]string{"locks", "--older-than", "11m", "--verdict", "Live,Unlocked", "--exit-code"}, 0, ""},
		// --exit-code alone: any lock listed, the unlocked one too.
		{[]string{"locks", "--verdict", "Unlocked", "--exit-code"}, ExitFound, "terraformcluster/free"},
		// 0 keeps every held lock.
		{[]string{"locks", "--older-than", "0s", "--sort-by", ".metadata.name"}, 0, ""},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			f, _ := ageWorld().factory(t)
			res := captf(t, f, c.args...)
			if res.code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", res.code, c.code, res.out, res.err)
			}
			got := strings.Join(objectsIn(res.out), " ")
			if c.args[2] == "0s" {
				if n := len(objectsIn(res.out)); n != 4 || strings.Contains(res.out, "terraformcluster/free") {
					t.Errorf("--older-than 0s keeps the 4 held locks:\n%s", res.out)
				}
				return
			}
			if got != c.want {
				t.Errorf("listed %q, want %q\n%s", got, c.want, res.out)
			}
			if c.want == "" && (res.out != "" || res.err != "No resources found in infra namespace.\n") {
				t.Errorf("nothing found: stdout %q, stderr %q", res.out, res.err)
			}
			if c.want != "" && res.err != "" {
				t.Errorf("stderr %q", res.err)
			}
		})
	}
}

// Every output format prints what it finds and exits 4; with nothing
// found, 0 and an empty list.
func TestLocksExitCodeFormats(t *testing.T) {
	check := []string{"locks", "--verdict", "Stale,Foreign,Unknown", "--older-than", "30m", "--exit-code"}
	none := []string{"locks", "--verdict", "Live", "--older-than", "1h", "--exit-code"}
	f, _ := ageWorld().factory(t)
	for _, format := range []string{"json", "yaml"} {
		res := captf(t, f, append(check, "-o", format)...)
		var list v1alpha1.LockList
		if err := yaml.Unmarshal([]byte(res.out), &list); err != nil || res.code != ExitFound || len(list.Items) != 3 || res.err != "" {
			t.Errorf("-o %s: exit %d, %d items, %v\n%s%s", format, res.code, len(list.Items), err, res.out, res.err)
		}
		res = captf(t, f, append(none, "-o", format)...)
		list = v1alpha1.LockList{}
		if err := yaml.Unmarshal([]byte(res.out), &list); err != nil || res.code != 0 || len(list.Items) != 0 || list.Kind != "LockList" || res.err != "" {
			t.Errorf("-o %s, nothing found: exit %d, %v\n%s%s", format, res.code, err, res.out, res.err)
		}
	}
	res := captf(t, f, append(check, "-o", "name")...)
	if res.code != ExitFound || strings.Count(res.out, "lease.coordination.k8s.io/lock-tfstate-default-") != 3 {
		t.Errorf("-o name: exit %d\n%s%s", res.code, res.out, res.err)
	}
	if res := captf(t, f, append(none, "-o", "name")...); res.code != 0 || res.out != "" || res.err != "" {
		t.Errorf("-o name, nothing found: %+v", res)
	}
	res = captf(t, f, append(check, "-o", "wide")...)
	if res.code != ExitFound || len(objectsIn(res.out)) != 3 || !strings.Contains(res.out, "REASON") {
		t.Errorf("-o wide: exit %d\n%s%s", res.code, res.out, res.err)
	}
	res = captf(t, f, append(check, "-o", "jsonpath={.items[*].object.name}")...)
	if res.code != ExitFound || res.out != "db web-1 cache" {
		t.Errorf("-o jsonpath: exit %d %q %q", res.code, res.out, res.err)
	}
}

// With --contexts the code is 4 if any context lists a lock. A context
// that cannot be read while nothing is found elsewhere is an error: an
// alert must not read that as all clear.
func TestLocksExitCodeContexts(t *testing.T) {
	f, srv := ageWorld().factory(t)
	// Both contexts read the fake API server, with clients of their own.
	f.forContext = func(*rest.Config) (*clients, error) { return newClients(srv.Config()) }
	check := []string{"locks", "--contexts", "test,other", "--verdict", "Stale", "--older-than", "30m", "--exit-code"}
	res := captf(t, f, check...)
	if res.code != ExitFound || strings.Count(res.out, "terraformmachine/web-1") != 2 {
		t.Errorf("both contexts: exit %d\n%s%s", res.code, res.out, res.err)
	}
	f.forContext = func(cfg *rest.Config) (*clients, error) {
		if strings.Contains(cfg.Host, "127.0.0.2") {
			return nil, errNoCluster
		}
		return newClients(srv.Config())
	}
	res = captf(t, f, check...)
	if res.code != ExitFound || !strings.Contains(res.out, "terraformmachine/web-1") || !strings.Contains(res.err, "Warning: context other: no cluster here") {
		t.Errorf("one context unreadable, a lock found in the other: exit %d\n%s%s", res.code, res.out, res.err)
	}
	nothing := []string{"locks", "--contexts", "test,other", "--verdict", "Live", "--older-than", "1h", "--exit-code"}
	res = captf(t, f, nothing...)
	lines := strings.Split(strings.TrimSpace(res.err), "\n")
	if res.code != ExitError || len(lines) != 2 || lines[1] != "error: nothing was found, but context other could not be read: with --exit-code that is not all clear" {
		t.Errorf("one context unreadable, nothing found: exit %d\n%s%s", res.code, res.out, res.err)
	}
	// Without --exit-code, an unreadable context stays a warning.
	if res := captf(t, f, nothing[:len(nothing)-1]...); res.code != 0 {
		t.Errorf("without --exit-code: exit %d\n%s", res.code, res.err)
	}
	f.forContext = func(*rest.Config) (*clients, error) { return newClients(srv.Config()) }
	if res := captf(t, f, nothing...); res.code != 0 || res.err != "No resources found\n" {
		t.Errorf("nothing found in either context: %+v", res)
	}
}

// Bad input is one line on stderr and exit 1, before any output; never
// the exit code that means "found".
func TestLocksOlderThanExitCodeErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"locks", "--older-than", "-5m", "--exit-code"}, "error: --older-than -5m0s is negative: give a duration of 0 or more, such as 30m or 2h"},
		{[]string{"locks", "--older-than", "30", "--exit-code"}, `error: invalid argument "30" for "--older-than" flag: must be a duration like "30s" or "5m"`}, // pflag v1.1.0's wording
		{[]string{"locks", "--older-than", "soon"}, `error: invalid argument "soon" for "--older-than" flag`},
		{[]string{"locks", "-w", "--exit-code"}, "error: --exit-code reports one listing's result; it does not go with --watch"},
		{[]string{"locks", "-w", "--older-than", "30m"}, "error: --older-than does not go with --watch"},
		{[]string{"locks", "--exit-code", "--verdict", "stale"}, `error: --verdict "stale" is not a verdict`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			f, _ := ageWorld().factory(t)
			res := captf(t, f, c.args...)
			if res.code != ExitError || res.out != "" || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, c.err) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one line starting %q", res.code, res.out, res.err, c.err)
			}
		})
	}
}

// "No resources found in <ns> namespace." quotes a namespace that may come
// from a kubeconfig: a control character in it is shown, not sent to the
// terminal.
func TestLocksEmptyNamespaceEscaped(t *testing.T) {
	f, _ := newWorld("team\x1b[2Ja").factory(t)
	res := captf(t, f, "locks", "--exit-code")
	if res.code != 0 || res.err != "No resources found in team^[[2Ja namespace.\n" {
		t.Errorf("exit %d, stderr %q", res.code, res.err)
	}
	var list v1alpha1.LockList
	res = captf(t, f, "locks", "-o", "json", "--exit-code")
	if err := json.Unmarshal([]byte(res.out), &list); err != nil || res.code != 0 || len(list.Items) != 0 {
		t.Errorf("json: exit %d %v %q", res.code, err, res.out)
	}
}
