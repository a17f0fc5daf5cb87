package cmd

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
)

// Every flag combination that makes no sense, and every argument that
// names nothing, is one line on stderr and exit 1, before any output.
func TestCompleteAndValidateErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"locks", "--contexts", "a", "--all-contexts"}, "give --contexts or --all-contexts, not both"},
		{[]string{"locks", "-w", "--contexts", "a"}, "--watch follows one cluster"},
		{[]string{"locks", "--output-watch-events"}, "--output-watch-events goes with --watch"},
		{[]string{"locks", "--contexts", "a", "--context", "b"}, "--context names one cluster"},
		{[]string{"locks", "--verdict", "stale"}, `--verdict "stale" is not a verdict`},
		{[]string{"locks", "--verdict", ""}, `--verdict "" is not a verdict`},
		{[]string{"locks", "--sort-by", "{.a}{.b}"}, "--sort-by "},
		{[]string{"locks", "--color", "purple"}, `--color must be one of auto, always, never, not "purple"`},
		{[]string{"locks", "--capi-cluster", ""}, `--capi-cluster "" is not a Cluster's name`},
		{[]string{"locks", "-o", "bogus"}, `unable to match a printer suitable for the output format "bogus"`},
		{[]string{"locks", "-o", "kyaml"}, `unable to match a printer suitable for the output format "kyaml", allowed formats are: go-template, go-template-file, json, jsonpath, jsonpath-as-json, jsonpath-file, name, template, templatefile, wide, yaml`},
		{[]string{"locks", "extra"}, `unknown command "extra"`},
		{[]string{"explain"}, "name the object to explain (TYPE/NAME or lease/NAME)"},
		{[]string{"explain", "a", "b", "c"}, "name one object (TYPE/NAME or TYPE NAME), not 3 arguments"},
		{[]string{"explain", "terraformcluster/demo", "-o", "wide"}, `allowed formats are: json, yaml`},
		{[]string{"explain", "pod/x"}, "pod has no Terraform state"},
		{[]string{"explain", "lease/other"}, `lease "other" is not a Terraform lock Lease`},
		{[]string{"explain", "terraformcluster/missing"}, "not found"},
		{[]string{"explain", "nosuchkind/x"}, `the server doesn't have a resource type "nosuchkind"`},
		{[]string{"unlock"}, "name the lock to clear (TYPE/NAME or lease/NAME), or give --all-stale"},
		{[]string{"unlock", "terraformcluster/demo", "--all-stale"}, "name a lock or give --all-stale, not both"},
		{[]string{"unlock", "--all-stale", "--force"}, "--all-stale clears only Stale locks"},
		{[]string{"unlock", "--all-stale", "--id", "x"}, "--all-stale clears only Stale locks"},
		{[]string{"unlock", "terraformcluster/demo", "-A"}, "-A goes with --all-stale"},
		{[]string{"unlock", "terraformcluster/demo", "-o", "wide"}, "allowed formats are: json, name, yaml"},
		{[]string{"version", "-o", "wide"}, `allowed formats are: json, yaml`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			w := verdictsWorld()
			w.pod("x", corev1.PodRunning)
			w.add(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: w.ns}})
			f, srv := w.factory(t)
			res := captf(t, f, c.args...)
			if res.code != ExitError || res.out != "" || !strings.HasPrefix(res.err, "error: ") || strings.Count(res.err, "\n") != 1 || !strings.Contains(res.err, c.err) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one line with %q", res.code, res.out, res.err, c.err)
			}
			if w := writes(srv); len(w) != 0 {
				t.Errorf("writes: %q", w)
			}
		})
	}
}

func TestLocksFilterSortAndMachineFormats(t *testing.T) {
	f, _ := verdictsWorld().factory(t)
	res := captf(t, f, "locks", "--verdict", "Stale,Foreign", "--sort-by", ".object.name", "-o", "json")
	var list v1alpha1.LockList
	if err := json.Unmarshal([]byte(res.out), &list); err != nil || res.code != 0 {
		t.Fatalf("exit %d: %v\n%s", res.code, err, res.out)
	}
	if len(list.Items) != 2 || list.Items[0].Object.Name != "db" || list.Items[1].Object.Name != "web-1" || list.Kind != "LockList" {
		t.Errorf("filtered and sorted: %+v", list.Items)
	}
	res = captf(t, f, "locks", "--verdict", "Live", "-o", "yaml")
	if err := yaml.Unmarshal([]byte(res.out), &list); err != nil || len(list.Items) != 1 || list.Items[0].Verdict != v1alpha1.Live {
		t.Errorf("yaml: %v\n%s", err, res.out)
	}
	res = captf(t, f, "locks", "--color", "always", "--verdict", "Stale", "--no-headers")
	if !strings.Contains(res.out, "\x1b[33mStale\x1b[0m") || strings.Contains(res.out, "VERDICT") {
		t.Errorf("--color always --no-headers:\n%q", res.out)
	}
	if res := captf(t, f, "locks", "--verdict", "Stale", "-o", "json", "--color", "always"); strings.Contains(res.out, "\x1b[") {
		t.Errorf("json is never coloured:\n%s", res.out)
	}
}

func TestLocksEmpty(t *testing.T) {
	f, _ := newWorld("empty").factory(t)
	if res := captf(t, f, "locks"); res.code != 0 || res.out != "" || res.err != "No resources found in empty namespace.\n" {
		t.Errorf("empty namespace: %+v", res)
	}
	if res := captf(t, f, "locks", "-A"); res.code != 0 || res.err != "No resources found\n" {
		t.Errorf("empty cluster: %+v", res)
	}
	if res := captf(t, f, "locks", "-o", "json"); res.code != 0 || res.err != "" || !strings.Contains(res.out, `"items": []`) {
		t.Errorf("empty json: %+v", res)
	}
	if res := captf(t, f, "unlock", "--all-stale"); res.code != 0 || res.err != "No stale locks found in empty namespace.\n" {
		t.Errorf("--all-stale, nothing stale: %+v", res)
	}
}

// --contexts reads each context with its own clients; a context that
// cannot be read is a marked row and a warning, not a failure.
func TestLocksContexts(t *testing.T) {
	f, srv := verdictsWorld().factory(t)
	// Every context's clients come from newClients, as in production,
	// over the fake API server instead of the kubeconfig's server.
	var hosts []string
	var mu sync.Mutex
	f.forContext = func(cfg *rest.Config) (*clients, error) {
		mu.Lock()
		hosts = append(hosts, cfg.Host)
		mu.Unlock()
		return newClients(srv.Config())
	}
	res := captf(t, f, "locks", "--contexts", "test", "--verdict", "Stale")
	if res.code != 0 || !strings.HasPrefix(res.out, "CONTEXT   OBJECT") || !strings.Contains(res.out, "test      terraformmachine/web-1   Stale") {
		t.Errorf("--contexts test: exit %d\n%s%s", res.code, res.out, res.err)
	}
	if len(hosts) != 1 || hosts[0] != "https://127.0.0.1:1" {
		t.Errorf("--contexts test read the clusters %q, want the test context's", hosts)
	}
	// other's cluster cannot be read: a marked row under the same columns.
	f.forContext = func(cfg *rest.Config) (*clients, error) {
		if strings.Contains(cfg.Host, "127.0.0.2") {
			return nil, errNoCluster
		}
		return newClients(srv.Config())
	}
	res = captf(t, f, "locks", "--all-contexts", "-A", "-o", "wide", "--verdict", "Stale")
	rows := strings.Split(strings.TrimSpace(res.out), "\n")
	if res.code != 0 || len(rows) != 3 || !strings.Contains(res.err, "Warning: context other: no cluster here") {
		t.Fatalf("--all-contexts with one unreadable: exit %d\n%s%s", res.code, res.out, res.err)
	}
	if got := strings.Fields(rows[2]); strings.Join(got[:4], " ") != "other <none> <error> <none>" || got[len(got)-3] != "no" {
		t.Errorf("the unreadable context's row: %q", rows[2])
	}
	res = captf(t, f, "locks", "--contexts", "nosuch")
	if res.code != 1 || !strings.Contains(res.err, `context "nosuch" is not in the kubeconfig`) {
		t.Errorf("unknown context: %+v", res)
	}
	f.forContext = func(*rest.Config) (*clients, error) { return nil, errNoCluster }
	res = captf(t, f, "locks", "--contexts", "test", "-o", "wide")
	if res.code != 1 || !strings.Contains(res.err, "Warning: context test: no cluster here") || !strings.Contains(res.err, "none of the 1 contexts could be read") {
		t.Errorf("unreadable context: %+v", res)
	}
}

type clusterError string

func (e clusterError) Error() string { return string(e) }

const errNoCluster = clusterError("no cluster here")

func TestUnlockAllStaleAndFormats(t *testing.T) {
	f, srv := verdictsWorld().factory(t)
	if res := captf(t, f, "locks"); res.code != 0 {
		t.Fatalf("locks: %+v", res)
	}
	read := requested(srv)
	srv.ResetRequests()
	res := captf(t, f, "unlock", "--all-stale")
	if res.code != 0 || !strings.Contains(res.out, "Dry run: nothing was written.") || !strings.HasSuffix(res.out, "\n1 stale lock: would unlock 1.\n") {
		t.Errorf("dry run: %+v", res)
	}
	// A dry run reads the scope as locks does, and nothing more.
	if got := requested(srv); !slices.Equal(got, read) {
		t.Errorf("unlock --all-stale requested\n%q\nlocks requested\n%q", got, read)
	}
	res = captf(t, f, "unlock", "terraformmachine/web-1", "-o", "name")
	if res.code != 0 || res.out != "lease.coordination.k8s.io/lock-tfstate-default-2f32fa8c86da1c86-m\n" {
		t.Errorf("-o name: %+v", res)
	}
	res = captf(t, f, "unlock", "terraformcluster/demo", "-o", "name")
	if res.code != 3 || res.out != "" {
		t.Errorf("-o name of a refusal names nothing: %+v", res)
	}
	srv.ResetRequests()
	res = captf(t, f, "unlock", "--all-stale", "-A", "--confirm", "-o", "json")
	var list v1alpha1.UnlockResultList
	if err := json.Unmarshal([]byte(res.out), &list); err != nil || res.code != 0 || len(list.Items) != 1 || list.Items[0].Action != v1alpha1.ActionUnlocked {
		t.Fatalf("--all-stale --confirm: %v %+v", err, res)
	}
	// One read of every namespace (the first request: the Leases' list),
	// with the holder pod the labelled list lacks read by name; the Stale
	// lock's Lease and holder pod read again just before the write; who
	// asks, once; the write, at the resourceVersion just read; then its
	// Event, last.
	reqs := srv.Requests()
	if r := reqs[len(reqs)-1]; r.Verb != "create" || r.Resource != "events" || r.Group != "events.k8s.io" || r.Namespace != "infra" {
		t.Errorf("the unlock is not recorded as an Event last: %s %s", r.Verb, r.Path)
	}
	if l := reqs[0]; l.Verb != "list" || l.Resource != "leases" || l.Namespace != "" {
		t.Errorf("the first request is %s %s, not the list of every Lease", l.Verb, l.Path)
	}
	const webLease = "lock-tfstate-default-2f32fa8c86da1c86-m"
	for _, c := range []struct {
		verb, resource string
		n              int
	}{{"list", "leases", 1}, {"get", "leases", 1}, {"get", "pods", 2}, {"create", "selfsubjectreviews", 1}, {"update", "leases", 1}, {"create", "events", 1}} {
		if n := srv.Count(c.verb, c.resource); n != c.n {
			t.Errorf("%d %s of %s, want %d", n, c.verb, c.resource, c.n)
		}
	}
	if w := writes(srv); len(w) != 2 || w[0] != "update leases infra/"+webLease || w[1] != "create events infra/" {
		t.Errorf("writes %q, want the Lease's update, then its Event", w)
	}
	for _, r := range reqs {
		if r.Verb == "update" {
			if l, ok := decodeBody(t, r).(*coordinationv1.Lease); !ok || l.ResourceVersion != "42" || l.Spec.HolderIdentity != nil {
				t.Errorf("the update is not the release at the resourceVersion read (42): %+v", l)
			}
		}
	}
	if l := trackedLease(t, srv, "infra", webLease); l.Spec.HolderIdentity != nil || l.Annotations[inspect.AnnotationLock] != "" {
		t.Errorf("the Lease after the unlock: %+v", l)
	}
	res = captf(t, f, "unlock", "terraformmachine/web-1", "-o", "yaml")
	var one v1alpha1.UnlockResult
	if err := yaml.Unmarshal([]byte(res.out), &one); err != nil || res.code != 0 || one.Action != v1alpha1.AlreadyUnlocked {
		t.Errorf("after the unlock, the lock is free: %v %+v", err, res)
	}
}

func TestExplainMachineFormats(t *testing.T) {
	f, srv := verdictsWorld().factory(t)
	res := captf(t, f, "explain", "terraformmachine", "db", "-o", "json")
	var x v1alpha1.Explanation
	if err := json.Unmarshal([]byte(res.out), &x); err != nil || res.code != 0 || x.Verdict != v1alpha1.Foreign || x.Kind != "Explanation" {
		t.Errorf("json: %v %+v", err, res)
	}
	res = captf(t, f, "explain", "lease/lock-tfstate-default-2f32fa8c86da1c86-m", "-o", "yaml")
	if err := yaml.Unmarshal([]byte(res.out), &x); err != nil || x.Verdict != v1alpha1.Stale {
		t.Errorf("yaml by lease: %v %+v", err, res)
	}
	if w := writes(srv); len(w) != 0 {
		t.Errorf("explain writes %q", w)
	}
}

func TestVersion(t *testing.T) {
	for _, c := range []struct{ format, want string }{{"", "kubectl-captf "}, {"json", `"captfRules"`}, {"yaml", "captfRules: "}} {
		args := []string{"version"}
		if c.format != "" {
			args = append(args, "-o", c.format)
		}
		if res := captf(t, &factory{}, args...); res.code != 0 || !strings.Contains(res.out, c.want) {
			t.Errorf("version %s: %+v", c.format, res)
		}
	}
}

// A watch whose first list is refused ends at once with that error, as a
// plain listing does, instead of retrying forever behind a blank screen.
func TestWatchListRefused(t *testing.T) {
	for _, resource := range []string{"leases", "pods"} {
		t.Run(resource, func(t *testing.T) {
			f, srv := verdictsWorld().factory(t)
			// RBAC refuses the list, and the watch a client-go with
			// WatchListClient on (the default from v0.35) starts with.
			srv.Intercept(fakeapi.Fail(func(r fakeapi.Request) bool { return (r.Verb == "list" || r.Verb == "watch") && r.Resource == resource },
				apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", errors.New("RBAC says no"))))
			done := make(chan ran, 1)
			go func() { done <- captf(t, f, "locks", "-w") }()
			select {
			case res := <-done:
				if res.code != ExitError || !strings.HasPrefix(res.err, "error: cannot list "+resource) || strings.Count(res.err, "\n") != 1 || res.out != "" {
					t.Errorf("exit %d, stdout %q, stderr %q", res.code, res.out, res.err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the watch still runs 30 s after its list was refused")
			}
		})
	}
}

// A Lease that changes between the read and the write (its holder renews
// it) gets a real 409 Conflict from the server on the write, which carries
// the resourceVersion read: the outcome is Conflict, exit 3, the Lease
// stays as its holder left it and no Event is recorded; for one lock and
// for each lock of --all-stale, which reads it again just before.
func TestUnlockConflict(t *testing.T) {
	const lease = "lock-tfstate-default-2f32fa8c86da1c86-m"
	for _, args := range [][]string{
		{"unlock", "terraformmachine/web-1", "--confirm", "-o", "json"},
		{"unlock", "--all-stale", "--confirm", "-o", "json"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			f, srv := verdictsWorld().factory(t)
			var once sync.Once
			srv.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
				if req := fakeapi.RequestInfo(r); req.Verb == "update" && req.Resource == "leases" {
					once.Do(func() {
						obj, err := srv.Tracker().Get(leasesGVR, "infra", lease)
						if err != nil {
							t.Error(err)
							return
						}
						l := obj.(*coordinationv1.Lease)
						l.Annotations["renewed"] = "true"
						if err := srv.Tracker().Update(leasesGVR, l, "infra"); err != nil {
							t.Error(err)
						}
					})
				}
				return false // the server answers the write itself
			})
			res := captf(t, f, args...)
			if res.code != ExitRefused {
				t.Errorf("exit %d, want %d: %s%s", res.code, ExitRefused, res.out, res.err)
			}
			var one v1alpha1.UnlockResult
			if strings.Contains(args[1], "all-stale") {
				var list v1alpha1.UnlockResultList
				if err := json.Unmarshal([]byte(res.out), &list); err != nil || len(list.Items) != 1 {
					t.Fatalf("%v: %s", err, res.out)
				}
				one = list.Items[0]
			} else if err := json.Unmarshal([]byte(res.out), &one); err != nil {
				t.Fatalf("%v: %s", err, res.out)
			}
			if one.Action != v1alpha1.Conflict || !strings.HasPrefix(one.Message, "the lock changed since it was read") {
				t.Errorf("outcome %s: %s", one.Action, one.Message)
			}
			if n := srv.Count("update", "leases"); n != 1 {
				t.Errorf("%d updates of the Lease, want 1 (refused, not retried)", n)
			}
			if n := srv.Count("create", "events"); n != 0 {
				t.Errorf("%d Events for a refused write", n)
			}
			// The Lease is as its holder renewed it, past the version read.
			l := trackedLease(t, srv, "infra", lease)
			if l.Annotations["renewed"] != "true" || l.ResourceVersion == "42" || l.Spec.HolderIdentity == nil || l.Annotations[inspect.AnnotationLock] == "" {
				t.Errorf("the Lease after the conflict: %+v", l)
			}
		})
	}
}

// json, yaml and name say each failed lock on stderr: their stdout has no
// room for it.
func TestUnlockFailureOnStderr(t *testing.T) {
	for _, format := range []string{"name", "json"} {
		f, srv := verdictsWorld().factory(t)
		srv.Intercept(fakeapi.Fail(func(r fakeapi.Request) bool { return r.Verb == "update" && r.Resource == "leases" }, apierrors.NewBadRequest("boom")))
		res := captf(t, f, "unlock", "--all-stale", "--confirm", "-o", format)
		if res.code != ExitError || !strings.Contains(res.err, "error: lock-tfstate-default-2f32fa8c86da1c86-m: boom") {
			t.Errorf("-o %s: exit %d, stderr %q", format, res.code, res.err)
		}
		if n := srv.Count("create", "events"); n != 0 {
			t.Errorf("-o %s: %d Events for a refused write", format, n)
		}
	}
}
