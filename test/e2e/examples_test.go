package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"mvdan.cc/sh/v3/shell"

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

// Every `kubectl captf ...` line of every --help runs, exactly as written,
// with exit code 0 against a cluster seeded as the examples assume: in
// namespace infra, terraformcluster/demo with a stale lock (its runner pod
// gone) and terraformmachine/web-1 with a workstation's lock of the ID the
// unlock example names; in namespace team-a, one more stale lock for
// `unlock --all-stale -A` and a live one it must leave. The cluster is this
// test's own, so the -A examples see only these locks and clear none of
// another test's.
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
	lock := func(r object.Ref, id, who string) {
		t.Helper()
		info := testbed.LockInfo(id, who, now.Add(-20*time.Minute))
		if _, err := cs.LockLease(ctx, r.Namespace, r.Suffix(), testbed.OwnerLabels(r), &id, &info); err != nil {
			t.Fatal(err)
		}
	}
	mk := func(k object.Kind, ns, name string, status map[string]any) object.Ref {
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

	// infra/terraformcluster/demo: Stale, its OOM-killed runner's pod is gone.
	demo := mk(object.TerraformCluster, "infra", "demo", map[string]any{"conditions": []any{
		testbed.Condition("Ready", "False", "NotReady", "The last apply failed.", now.Add(-19*time.Minute)),
	}})
	lock(demo, "0d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a", "root@"+runner.JobName(demo.Kind, demo.Name, "apply", 1, "d72d2a")+"-x7k2p")
	// infra/terraformmachine/web-1: Foreign, held from a workstation; CAPTF
	// reports it (no Job is active and the object is not paused).
	web1 := mk(object.TerraformMachine, "infra", "web-1", map[string]any{"conditions": []any{
		testbed.Condition("StateReadable", "False", "StateLocked", "The state lock "+workstationLockID+" is held by alice@laptop.", now.Add(-15*time.Minute)),
	}})
	lock(web1, workstationLockID, "alice@laptop")
	// team-a/terraformmachinepool/workers: Stale, its runner pod Failed.
	workers := mk(object.TerraformMachinePool, "team-a", "workers", map[string]any{"replicas": int64(3)})
	workersPod := runner.JobName(workers.Kind, workers.Name, "apply", 2, "0a1b2c") + "-q8w7e"
	lock(workers, "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b", "root@"+workersPod)
	if _, err := cs.RunnerPod(ctx, workers, workersPod, corev1.PodFailed); err != nil {
		t.Fatal(err)
	}
	// team-a/terraformcluster/edge: Live, its runner Job and pod running.
	edgeJob := runner.JobName(object.TerraformCluster, "edge", "refresh", 1, "9f8e7d")
	edge := mk(object.TerraformCluster, "team-a", "edge", map[string]any{
		"activeJob": testbed.ActiveJob(edgeJob, "refresh", 1, now.Add(-time.Minute)),
	})
	lock(edge, "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d", "root@"+edgeJob+"-m3n4p")
	if err := cs.RunnerJob(ctx, edge, edgeJob, false); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RunnerPod(ctx, edge, edgeJob+"-m3n4p", corev1.PodRunning); err != nil {
		t.Fatal(err)
	}

	// The context's namespace is infra, for the examples without -n.
	kc, err := c.KubeconfigFor(testbed.AdminUser, "infra")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range examples {
		res := captf(t, kc, exampleArgs(t, line)...)
		if res.code != 0 {
			t.Errorf("%s\nexit %d\nstdout:\n%s\nstderr:\n%s", line, res.code, res.out, res.err)
			continue
		}
		t.Logf("%s\n%s%s", line, res.out, res.err)
	}

	// The unlock examples did what their comments say: the stale locks and
	// the workstation's lock named by its ID are free, the live one is held.
	for _, r := range []object.Ref{demo, web1, workers, edge} {
		l, err := cs.Kube.CoordinationV1().Leases(r.Namespace).Get(ctx, object.LockLeaseName("default", r.Suffix()), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if held := l.Spec.HolderIdentity != nil; held != (r == edge) {
			t.Errorf("%s/%s: held %v after the examples", r.Namespace, r, held)
		}
	}
}
