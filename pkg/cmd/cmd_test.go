package cmd

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
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
		{[]string{"locks", "-o", "bogus"}, `unable to match a printer suitable for the output format "bogus"`},
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
			w.kube = append(w.kube, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: w.ns}})
			f, _ := w.factory()
			res := captf(t, f, c.args...)
			if res.code != ExitError || res.out != "" || !strings.HasPrefix(res.err, "error: ") || strings.Count(res.err, "\n") != 1 || !strings.Contains(res.err, c.err) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one line with %q", res.code, res.out, res.err, c.err)
			}
		})
	}
}

func TestLocksFilterSortAndMachineFormats(t *testing.T) {
	f, _ := verdictsWorld().factory()
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
	f, _ := newWorld("empty").factory()
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
	w := verdictsWorld()
	f, _ := w.factory()
	f.forContext = func(cfg *rest.Config) (*clients, error) { return f.clients, nil }
	res := captf(t, f, "locks", "--contexts", "test", "--verdict", "Stale")
	if res.code != 0 || !strings.HasPrefix(res.out, "CONTEXT   OBJECT") || !strings.Contains(res.out, "test      terraformmachine/web-1   Stale") {
		t.Errorf("--contexts test: exit %d\n%s%s", res.code, res.out, res.err)
	}
	// other's cluster cannot be read: a marked row under the same columns.
	f.forContext = func(cfg *rest.Config) (*clients, error) {
		if strings.Contains(cfg.Host, "127.0.0.2") {
			return nil, errNoCluster
		}
		return f.clients, nil
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
	f, kube := verdictsWorld().factory()
	res := captf(t, f, "unlock", "--all-stale")
	if res.code != 0 || !strings.Contains(res.out, "Dry run: nothing was written.") || !strings.HasSuffix(res.out, "\n1 stale lock: would unlock 1.\n") {
		t.Errorf("dry run: %+v", res)
	}
	res = captf(t, f, "unlock", "terraformmachine/web-1", "-o", "name")
	if res.code != 0 || res.out != "lease.coordination.k8s.io/lock-tfstate-default-2f32fa8c86da1c86-m\n" {
		t.Errorf("-o name: %+v", res)
	}
	res = captf(t, f, "unlock", "terraformcluster/demo", "-o", "name")
	if res.code != 3 || res.out != "" {
		t.Errorf("-o name of a refusal names nothing: %+v", res)
	}
	res = captf(t, f, "unlock", "--all-stale", "-A", "--confirm", "-o", "json")
	var list v1alpha1.UnlockResultList
	if err := json.Unmarshal([]byte(res.out), &list); err != nil || res.code != 0 || len(list.Items) != 1 || list.Items[0].Action != v1alpha1.ActionUnlocked {
		t.Fatalf("--all-stale --confirm: %v %+v", err, res)
	}
	if a := kube.Actions(); a[len(a)-1].GetVerb() != "create" || a[len(a)-1].GetResource().Resource != "events" {
		t.Errorf("the unlock is recorded as an Event last; actions: %v", a)
	}
	res = captf(t, f, "unlock", "terraformmachine/web-1", "-o", "yaml")
	var one v1alpha1.UnlockResult
	if err := yaml.Unmarshal([]byte(res.out), &one); err != nil || res.code != 0 || one.Action != v1alpha1.AlreadyUnlocked {
		t.Errorf("after the unlock, the lock is free: %v %+v", err, res)
	}
}

func TestExplainMachineFormats(t *testing.T) {
	f, _ := verdictsWorld().factory()
	res := captf(t, f, "explain", "terraformmachine", "db", "-o", "json")
	var x v1alpha1.Explanation
	if err := json.Unmarshal([]byte(res.out), &x); err != nil || res.code != 0 || x.Verdict != v1alpha1.Foreign || x.Kind != "Explanation" {
		t.Errorf("json: %v %+v", err, res)
	}
	res = captf(t, f, "explain", "lease/lock-tfstate-default-2f32fa8c86da1c86-m", "-o", "yaml")
	if err := yaml.Unmarshal([]byte(res.out), &x); err != nil || x.Verdict != v1alpha1.Stale {
		t.Errorf("yaml by lease: %v %+v", err, res)
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
			f, kube := verdictsWorld().factory()
			kube.PrependReactor("list", resource, func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", errors.New("RBAC says no"))
			})
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

// json, yaml and name say each failed lock on stderr: their stdout has no
// room for it.
func TestUnlockFailureOnStderr(t *testing.T) {
	for _, format := range []string{"name", "json"} {
		f, kube := verdictsWorld().factory()
		kube.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewBadRequest("boom")
		})
		res := captf(t, f, "unlock", "--all-stale", "--confirm", "-o", format)
		if res.code != ExitError || !strings.Contains(res.err, "error: lock-tfstate-default-2f32fa8c86da1c86-m: boom") {
			t.Errorf("-o %s: exit %d, stderr %q", format, res.code, res.err)
		}
	}
}
