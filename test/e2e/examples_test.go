package e2e

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"mvdan.cc/sh/v3/shell"
	"sigs.k8s.io/yaml"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/cmd"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// workstationLockID is the lock ID the unlock example names with --id.
const workstationLockID = "3c1e9a5b-7d2f-0e4a-8b6c-1f2e3d4c5b6a"

// helpExamples are the `kubectl captf ...` lines of every command's
// Example, in the order --help shows them, with continuation lines joined.
func helpExamples(t *testing.T) []string {
	t.Helper()
	var lines []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		joined := strings.ReplaceAll(c.Example, "\\\n", " ")
		for _, l := range strings.Split(joined, "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "kubectl captf ") {
				lines = append(lines, l)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd.NewCmdCaptf(genericiooptions.NewTestIOStreamsDiscard()))
	return lines
}

// exampleArgs splits an example line as a shell does, and drops
// "kubectl captf". An example that needs a variable from the environment
// cannot run as written, so one is an error.
func exampleArgs(t *testing.T, line string) []string {
	t.Helper()
	var vars []string
	words, err := shell.Fields(line, func(name string) string {
		switch name {
		case "IFS": // looked up by the expansion itself
			return " \t\n"
		case "PWD":
			return ""
		}
		vars = append(vars, name)
		return ""
	})
	if err != nil || len(vars) > 0 || len(words) < 3 || words[0] != "kubectl" || words[1] != "captf" {
		t.Fatalf("%s: cannot run it as written (words %q, variables %q, %v)", line, words, vars, err)
	}
	return words[2:]
}

// exampleCheck is what an example's comment promises, checked on what it
// did: its exit code, what its output names, and which locks it cleared.
type exampleCheck struct {
	// before prepares the case the comment describes, when the cluster
	// is not in it already.
	before func(t *testing.T)
	code   int
	// writes: the example may write (unlock --confirm); every other
	// example must leave every Lease as it was.
	writes bool
	check  func(t *testing.T, res result)
}

// tableRows are a table's rows under its header, split into columns on
// runs of spaces; the header's column names are the keys.
func tableRows(t *testing.T, table string) (header []string, rows []map[string]string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	if len(lines) == 0 || lines[0] == "" {
		return nil, nil
	}
	// Column names with a space (LOCK ID, ACTIVE JOB, RUNNER END) are
	// one name: cells are found by the header's column starts.
	head := lines[0]
	var starts []int
	for i := 0; i < len(head); i++ {
		if head[i] != ' ' && (i == 0 || (head[i-1] == ' ' && (i < 2 || head[i-2] == ' '))) {
			starts = append(starts, i)
		}
	}
	for n, s := range starts {
		end := len(head)
		if n+1 < len(starts) {
			end = starts[n+1]
		}
		header = append(header, strings.TrimSpace(head[s:end]))
	}
	for _, l := range lines[1:] {
		row := map[string]string{}
		for n, s := range starts {
			end := len(l)
			if n+1 < len(starts) && starts[n+1] < len(l) {
				end = starts[n+1]
			}
			if s < len(l) {
				row[header[n]] = strings.TrimSpace(l[s:min(end, len(l))])
			}
		}
		rows = append(rows, row)
	}
	return header, rows
}

// Every `kubectl captf ...` line of every --help runs, exactly as written,
// against a cluster seeded as the examples assume, and does what the
// comment above it says: the exit code, what the output names, and which
// locks are cleared (and which are not) are checked after each one. An
// example without a check here, or a check whose example is gone, fails
// the test, so an example cannot change without its check.
//
// The cluster is this test's own, so the -A examples see only these locks
// and clear none of another test's. Its context's namespace is infra, for
// the examples without -n. The locks, their ages (for --sort-by and
// --older-than) and verdicts:
//
//	infra/terraformmachine/web-1          Foreign  45m  a workstation's, the ID the unlock example names
//	infra/terraformcluster/demo           Stale    25m  its OOM-killed runner's pod gone
//	team-a/terraformmachinepool/workers   Stale    15m  its runner pod Failed
//	infra/terraformmachine/web-2          Stale    12m  its runner pod Succeeded
//	team-a/terraformmachine/db            Foreign  10m  another workstation's; no example clears it
//	team-a/terraformcluster/edge          Live      5m  its runner Job and pod running
func TestHelpExamples(t *testing.T) {
	examples := helpExamples(t)
	// locks, explain and unlock have examples; a walk that finds fewer
	// lost some.
	if len(examples) < 8 {
		t.Fatalf("found only %d example lines: %q", len(examples), examples)
	}
	ctx := context.Background()
	c, err := testbed.Start(ctx, testbed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	cs, err := c.Clients()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	lock := func(r object.Ref, id, who string, age time.Duration) {
		t.Helper()
		info := testbed.LockInfo(id, who, now.Add(-age))
		if _, err := cs.LockLease(ctx, r.Namespace, r.Suffix(), testbed.BackendLabels(r, testbed.ObjectCluster), &id, &info); err != nil {
			t.Fatal(err)
		}
	}
	mk := func(t *testing.T, k object.Kind, ns, name string, status map[string]any) object.Ref {
		t.Helper()
		r := object.Ref{Kind: k, Namespace: ns, Name: name}
		if err := cs.Object(ctx, r); err != nil {
			t.Fatal(err)
		}
		status["stateSecretSuffix"] = r.Suffix()
		if err := cs.SetStatus(ctx, r, status); err != nil {
			t.Fatalf("status of %s: %v", r, err)
		}
		return r
	}

	demoStatus := func() map[string]any {
		return map[string]any{"conditions": []any{
			testbed.Condition("Ready", "False", "NotReady", "The last apply failed.", now.Add(-19*time.Minute)),
		}}
	}
	demo := mk(t, object.TerraformCluster, "infra", "demo", demoStatus())
	demoHolder := "root@" + runner.JobName(demo.Kind, demo.Name, "apply", 1, "d72d2a") + "-x7k2p"
	lock(demo, "0d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a", demoHolder, 25*time.Minute)
	// CAPTF reports the workstation's lock (no Job is active and the
	// object is not paused).
	web1 := mk(t, object.TerraformMachine, "infra", "web-1", map[string]any{"conditions": []any{
		testbed.Condition("StateReadable", "False", "StateLocked", "The state lock "+workstationLockID+" is held by alice@laptop.", now.Add(-15*time.Minute)),
	}})
	lock(web1, workstationLockID, "alice@laptop", 45*time.Minute)
	web2 := mk(t, object.TerraformMachine, "infra", "web-2", map[string]any{})
	web2Pod := runner.JobName(web2.Kind, web2.Name, "apply", 1, "3e4f5a") + "-b2c3d"
	lock(web2, "7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d0e", "root@"+web2Pod, 12*time.Minute)
	if _, err := cs.RunnerPod(ctx, web2, web2Pod, corev1.PodSucceeded); err != nil {
		t.Fatal(err)
	}
	workers := mk(t, object.TerraformMachinePool, "team-a", "workers", map[string]any{"replicas": int64(3)})
	workersPod := runner.JobName(workers.Kind, workers.Name, "apply", 2, "0a1b2c") + "-q8w7e"
	lock(workers, "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b", "root@"+workersPod, 15*time.Minute)
	if _, err := cs.RunnerPod(ctx, workers, workersPod, corev1.PodFailed); err != nil {
		t.Fatal(err)
	}
	db := mk(t, object.TerraformMachine, "team-a", "db", map[string]any{})
	// db's Machine is of Cluster API Cluster prod, as its label says.
	if err := cs.PatchObject(ctx, db, map[string]any{"metadata": map[string]any{"labels": map[string]any{testbed.ClusterNameLabel: "prod"}}}); err != nil {
		t.Fatal(err)
	}
	lock(db, "9d0e1f2a-3b4c-4d5e-8f6a-7b8c9d0e1f2a", "bob@desk", 10*time.Minute)
	edgeJob := runner.JobName(object.TerraformCluster, "edge", "refresh", 1, "9f8e7d")
	edge := mk(t, object.TerraformCluster, "team-a", "edge", map[string]any{
		"activeJob": testbed.ActiveJob(edgeJob, "refresh", 1, now.Add(-time.Minute)),
	})
	lock(edge, "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d", "root@"+edgeJob+"-m3n4p", 5*time.Minute)
	if err := cs.RunnerJob(ctx, edge, edgeJob, false); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RunnerPod(ctx, edge, edgeJob+"-m3n4p", corev1.PodRunning); err != nil {
		t.Fatal(err)
	}
	all := []object.Ref{web1, demo, workers, web2, db, edge} // oldest lock first
	leaseOf := func(r object.Ref) string { return object.LockLeaseName("default", r.Suffix()) }
	obj := func(r object.Ref) string { return strings.ToLower(r.Kind.Name) + "/" + r.Name }

	// held says which locks are held now, and leases their versions.
	leases := func(t *testing.T) map[object.Ref]*coordinationv1.Lease {
		t.Helper()
		out := map[object.Ref]*coordinationv1.Lease{}
		for _, r := range all {
			l, err := cs.Kube.CoordinationV1().Leases(r.Namespace).Get(ctx, leaseOf(r), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out[r] = l
		}
		return out
	}
	// wantHeld fails unless exactly the locks named are held, of all.
	wantHeld := func(t *testing.T, held ...object.Ref) {
		t.Helper()
		for r, l := range leases(t) {
			if got, want := l.Spec.HolderIdentity != nil, slices.Contains(held, r); got != want {
				t.Errorf("%s/%s: held %v, want %v", r.Namespace, obj(r), got, want)
			}
		}
	}
	// objects are a table's OBJECT column, in order.
	objects := func(t *testing.T, table string) []string {
		t.Helper()
		_, rows := tableRows(t, table)
		var out []string
		for _, r := range rows {
			out = append(out, r["OBJECT"])
		}
		return out
	}
	names := func(refs ...object.Ref) []string {
		var out []string
		for _, r := range refs {
			out = append(out, obj(r))
		}
		return out
	}

	checks := map[string]exampleCheck{
		// explain: the reasoning, the verdict, and the command to run.
		"kubectl captf explain terraformcluster/demo -n infra": {check: func(t *testing.T, res result) {
			out := flat(res.out)
			for _, want := range []string{"Object: terraformcluster/demo in namespace infra", "Holder: " + demoHolder,
				"How CAPTF's controller checks it:", "Verdict: Stale:", "What you can do:", "unlock terraformcluster/demo -n infra --id '0d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a' --confirm"} {
				if !strings.Contains(out, want) {
					t.Errorf("the explanation does not say %q", want)
				}
			}
		}},
		"kubectl captf explain terraformmachines.infrastructure.cluster.x-k8s.io web-1 -n infra": {check: func(t *testing.T, res result) {
			if out := flat(res.out); !strings.Contains(out, "Object: terraformmachine/web-1 in namespace infra") || !strings.Contains(out, "Verdict: Foreign:") {
				t.Error("the plural, group-qualified name did not find terraformmachine/web-1")
			}
		}},
		// The comment's case: the object is gone. Its lock is explained by
		// the Lease's name, and the object comes back for the examples
		// after this one.
		"kubectl captf explain lease/lock-tfstate-default-d980a2553508a5e1-c -n infra": {
			before: func(t *testing.T) {
				if leaseOf(demo) != "lock-tfstate-default-d980a2553508a5e1-c" {
					t.Fatalf("the example's Lease is not terraformcluster/demo's (%s)", leaseOf(demo))
				}
				if err := cs.Dynamic.Resource(demo.Kind.GVR()).Namespace(demo.Namespace).Delete(ctx, demo.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { mk(t, demo.Kind, demo.Namespace, demo.Name, demoStatus()) })
			},
			check: func(t *testing.T, res result) {
				out := flat(res.out)
				for _, want := range []string{"Object: terraformcluster/demo (does not exist) in namespace infra", "Lock: lease/lock-tfstate-default-d980a2553508a5e1-c",
					"Holder: " + demoHolder, "Verdict: Stale:", "no controller will clear it", "unlock lease/lock-tfstate-default-d980a2553508a5e1-c -n infra --id '0d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a' --confirm"} {
					if !strings.Contains(out, want) {
						t.Errorf("the explanation of the Lease of an object that is gone does not say %q", want)
					}
				}
			},
		},
		"kubectl captf explain terraformcluster/demo -n infra -o yaml": {check: func(t *testing.T, res result) {
			var x v1alpha1.Explanation
			if err := yaml.UnmarshalStrict([]byte(res.out), &x); err != nil {
				t.Fatal(err)
			}
			if x.APIVersion != "captf.io/v1alpha1" || x.Kind != "Explanation" || x.Name != leaseOf(demo) || x.Verdict != v1alpha1.Stale || len(x.Steps) == 0 {
				t.Errorf("not the Explanation of terraformcluster/demo's lock: %s %s %s %s, %d steps", x.APIVersion, x.Kind, x.Name, x.Verdict, len(x.Steps))
			}
		}},

		// locks: read only, each as its comment says.
		"kubectl captf locks": {check: func(t *testing.T, res result) {
			header, rows := tableRows(t, res.out)
			got := map[string]string{}
			for _, r := range rows {
				got[r["OBJECT"]] = r["VERDICT"]
			}
			want := map[string]string{obj(demo): "Stale", obj(web1): "Foreign", obj(web2): "Stale"}
			if !maps.Equal(got, want) || slices.Contains(header, "NAMESPACE") {
				t.Errorf("in namespace infra: %v, want %v", got, want)
			}
		}},
		"kubectl captf locks -n team-a --capi-cluster prod": {check: func(t *testing.T, res result) {
			_, rows := tableRows(t, res.out)
			if len(rows) != 1 || rows[0]["OBJECT"] != obj(db) {
				t.Errorf("the locks of Cluster prod in team-a: %v, want only %s's", rows, obj(db))
			}
		}},
		"kubectl captf locks -A -o wide": {check: func(t *testing.T, res result) {
			header, rows := tableRows(t, res.out)
			for _, col := range []string{"NAMESPACE", "VERDICT", "LOCK ID", "VERSION", "ACTIVE JOB", "REASON"} {
				if !slices.Contains(header, col) {
					t.Errorf("no %s column: %q", col, header)
				}
			}
			if len(rows) != len(all) {
				t.Errorf("%d rows, want one for each of the %d locks in every namespace", len(rows), len(all))
			}
			for _, r := range rows {
				if r["OBJECT"] == obj(edge) && (r["ACTIVE JOB"] != edgeJob || r["LOCK ID"] != "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d" || r["VERSION"] != "1.11.4" || !strings.Contains(r["REASON"], "Running")) {
					t.Errorf("edge's row has not its lock ID, version, active Job and reason: %v", r)
				}
			}
		}},
		"kubectl captf locks -A --verdict Stale,Foreign -o name": {check: func(t *testing.T, res result) {
			var want []string
			for _, r := range []object.Ref{web1, demo, workers, web2, db} {
				want = append(want, "lease.coordination.k8s.io/"+leaseOf(r))
			}
			got := strings.Fields(res.out)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("names %q, want the Stale and Foreign locks' %q", got, want)
			}
		}},
		"kubectl captf locks -A --sort-by=.lock.created": {check: func(t *testing.T, res result) {
			if got, want := objects(t, res.out), names(all...); !slices.Equal(got, want) {
				t.Errorf("order %q, want the oldest first: %q", got, want)
			}
		}},
		// Only web-1 is held for over 30 minutes; the Live edge is not
		// asked for.
		"kubectl captf locks -A --verdict Stale,Foreign,Unknown --older-than 30m --exit-code": {code: cmd.ExitFound, check: func(t *testing.T, res result) {
			if got := objects(t, res.out); !slices.Equal(got, names(web1)) {
				t.Errorf("listed %q, want only %s", got, obj(web1))
			}
		}},

		// unlock: the dry run writes nothing; each --confirm clears what
		// its comment says and nothing else.
		"kubectl captf unlock terraformcluster/demo -n infra": {check: func(t *testing.T, res result) {
			if out := flat(res.out); !strings.Contains(out, "Dry run: nothing was written") || !strings.Contains(out, "Verdict: Stale") {
				t.Error("the dry run does not say that it wrote nothing, or the verdict")
			}
			wantHeld(t, all...)
		}},
		"kubectl captf unlock terraformcluster/demo -n infra --confirm": {writes: true, check: func(t *testing.T, res result) {
			wantHeld(t, web1, workers, web2, db, edge)
		}},
		"kubectl captf unlock terraformmachine/web-1 -n infra --id 3c1e9a5b-7d2f-0e4a-8b6c-1f2e3d4c5b6a --confirm": {writes: true, check: func(t *testing.T, res result) {
			wantHeld(t, workers, web2, db, edge)
		}},
		"kubectl captf unlock terraformcluster/edge -n team-a --force --id 6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d --confirm": {writes: true, check: func(t *testing.T, res result) {
			wantHeld(t, workers, web2, db)
		}},
		// Both stale locks, in two namespaces; the Foreign db is left.
		"kubectl captf unlock --all-stale -A --confirm": {writes: true, check: func(t *testing.T, res result) {
			wantHeld(t, db)
			if out := flat(res.out); !strings.Contains(out, obj(workers)) || !strings.Contains(out, obj(web2)) {
				t.Error("the report does not name both stale locks it cleared")
			}
		}},
	}

	kc, err := c.KubeconfigFor(testbed.AdminUser, "infra")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range examples {
		ck, ok := checks[line]
		if !ok {
			t.Errorf("no check of what this example does: %s", line)
			continue
		}
		delete(checks, line)
		t.Run(line, func(t *testing.T) {
			if ck.before != nil {
				ck.before(t)
			}
			before := leases(t)
			res := captf(t, kc, exampleArgs(t, line)...)
			t.Logf("exit %d\n%s%s", res.code, res.out, res.err)
			if res.code != ck.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, ck.code, res.out, res.err)
			}
			if !ck.writes {
				for r, l := range leases(t) {
					if l.ResourceVersion != before[r].ResourceVersion {
						t.Errorf("%s/%s: the Lease was written", r.Namespace, obj(r))
					}
				}
			}
			ck.check(t, res)
		})
	}
	for line := range checks {
		t.Errorf("a check for an example --help no longer has: %s", line)
	}
}
