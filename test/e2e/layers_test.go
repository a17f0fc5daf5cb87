package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// The watch prints a change of any input of the verdict, not only of the
// Lease and the holder pod: a runner Job created and finished, and the
// owner object deleted. Each shows as a MODIFIED row of the lock. How long
// each took is logged, for docs/benchmarks.md; the bound in next is for
// liveness only (the machines are shared and noisy).
func TestWatchFollowsJobsAndOwner(t *testing.T) {
	ctx := context.Background()
	ns := "watchinputs"
	r := newObject(t, ns, object.TerraformCluster, "demo")
	b := testbed.Backend{Namespace: ns, Suffix: r.Suffix(), Labels: testbed.BackendLabels(r, testbed.ObjectCluster)}
	dir, err := tf.Init(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	host := "captf-c-demo-apply-a1-d72d2a-x7k2p"
	if _, err := tf.KilledLock(ctx, admin.Kube, dir, b, host); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RunnerPod(ctx, r, host, corev1.PodFailed); err != nil {
		t.Fatal(err)
	}
	events, cmd := watchWith(t, ns)
	first := next(t, events, "the initial list")
	if first.Type != "ADDED" || first.Object.Verdict != v1alpha1.Stale || first.Object.ActiveJob != "" {
		t.Fatalf("initial: %s %s active Job %q", first.Type, first.Object.Verdict, first.Object.ActiveJob)
	}

	// A runner Job of the object starts: the row names it.
	job := "captf-c-demo-apply-a2-e4f5a6"
	start := time.Now()
	if err := admin.RunnerJob(ctx, r, job, false); err != nil {
		t.Fatal(err)
	}
	e := next(t, events, "the Job's creation")
	t.Logf("Job created: MODIFIED after %s", time.Since(start).Round(time.Millisecond))
	if e.Type != "MODIFIED" || e.Object.ActiveJob != job || e.Object.Verdict != v1alpha1.Stale {
		t.Fatalf("after the Job started: %s %s active Job %q, want MODIFIED naming %s", e.Type, e.Object.Verdict, e.Object.ActiveJob, job)
	}

	// It finishes: no active Job any more.
	j, err := admin.Kube.BatchV1().Jobs(ns).Get(ctx, job, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	j.Status.StartTime = &now
	j.Status.Failed = 1
	j.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	start = time.Now()
	if _, err := admin.Kube.BatchV1().Jobs(ns).UpdateStatus(ctx, j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e = next(t, events, "the Job's end")
	t.Logf("Job finished: MODIFIED after %s", time.Since(start).Round(time.Millisecond))
	if e.Type != "MODIFIED" || e.Object.ActiveJob != "" {
		t.Fatalf("after the Job ended: %s active Job %q, want MODIFIED with none", e.Type, e.Object.ActiveJob)
	}
	before := e.Object.Reason

	// The owner object is deleted: the verdict's reason says no controller
	// will clear the lock any more.
	start = time.Now()
	if err := admin.Dynamic.Resource(r.Kind.GVR()).Namespace(ns).Delete(ctx, r.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e = next(t, events, "the owner's deletion")
	t.Logf("owner deleted: MODIFIED after %s", time.Since(start).Round(time.Millisecond))
	if e.Type != "MODIFIED" || e.Object.Verdict != v1alpha1.Stale || e.Object.Reason == before ||
		!strings.Contains(e.Object.Reason, "no longer exists") || e.Object.Object == nil || e.Object.Object.Exists == nil || *e.Object.Object.Exists {
		t.Fatalf("after the owner was deleted: %s %s %q object %+v", e.Type, e.Object.Verdict, e.Object.Reason, e.Object.Object)
	}
	if code := interrupt(t, cmd); code != 130 {
		t.Errorf("exit %d after Ctrl-C", code)
	}
}

// captfRequests is the count the plugin prints with RequestCountEnv set.
var captfRequests = regexp.MustCompile(`captf-requests: (\d+)`)

// countedCaptf runs the plugin with its request count on, and returns its
// stdout and the count.
func countedCaptf(t *testing.T, kubeconfig string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, plugin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECTL_CAPTF_COUNT_REQUESTS=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl captf %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	checkRace(t, cmd.Process.Pid, errb.String())
	m := captfRequests.FindStringSubmatch(errb.String())
	if m == nil {
		t.Fatalf("no request count on stderr:\n%s", errb.String())
	}
	n, _ := strconv.Atoi(m[1])
	return out.String(), n
}

// unlock --all-stale over many Stale locks reads once for all of them, and
// at write time re-reads only what its guard needs: at most 20 requests
// for the dry run and at most 4.5 a lock for --confirm (issue 21), which
// leaves no Stale lock and touches no other.
func TestAllStaleOverManyLocks(t *testing.T) {
	ctx := context.Background()
	ns := "allstalemany"
	const stale, others = 40, 10
	var keep []object.Ref
	for i := range stale {
		r := newObject(t, ns, object.TerraformMachine, fmt.Sprintf("gone-%02d", i))
		host := fmt.Sprintf("captf-m-gone-%02d-apply-a1-d72d2a-x7k2p", i)
		if i < 2 {
			// Two real terraform locks among the written ones.
			b := testbed.Backend{Namespace: ns, Suffix: r.Suffix(), Labels: testbed.BackendLabels(r, testbed.ObjectCluster)}
			dir, err := tf.Init(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tf.KilledLock(ctx, admin.Kube, dir, b, host); err != nil {
				t.Fatal(err)
			}
		} else {
			syntheticLock(t, r, fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "root@"+host, nil)
		}
		if i%2 == 0 {
			// Half the runner pods ended Failed, the others are gone.
			if _, err := admin.RunnerPod(ctx, r, host, corev1.PodFailed); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range others {
		r := newObject(t, ns, object.TerraformMachine, fmt.Sprintf("keep-%02d", i))
		host := fmt.Sprintf("captf-m-keep-%02d-apply-a1-d72d2a-x7k2p", i)
		who := "root@" + host
		if i%2 == 1 {
			who = "alice@laptop" // Foreign
		} else if _, err := admin.RunnerPod(ctx, r, host, corev1.PodRunning); err != nil { // Live
			t.Fatal(err)
		}
		syntheticLock(t, r, fmt.Sprintf("11111111-0000-4000-8000-%012d", i), who, nil)
		keep = append(keep, r)
	}
	kept := map[string]string{}
	for _, r := range keep {
		kept[r.Name] = getLease(t, r).ResourceVersion
	}
	kc := kubeconfigIn(t, ns)

	out, dry := countedCaptf(t, kc, "unlock", "--all-stale", "-o", "json")
	t.Logf("dry run: %d requests for %d Stale locks", dry, stale)
	if dry > 20 {
		t.Errorf("the dry run sent %d requests, want at most 20", dry)
	}
	var results struct{ Items []v1alpha1.UnlockResult }
	if err := json.Unmarshal([]byte(out), &results); err != nil {
		t.Fatalf("the dry run's JSON: %v", err)
	}
	if len(results.Items) != stale {
		t.Errorf("the dry run reports %d locks, want the %d Stale ones", len(results.Items), stale)
	}
	if locks := staleLockNames(t, kc); len(locks) != stale {
		t.Fatalf("after the dry run %d Stale locks, want all %d (nothing written)", len(locks), stale)
	}

	_, confirm := countedCaptf(t, kc, "unlock", "--all-stale", "--confirm", "-o", "json")
	perLock := float64(confirm) / stale
	t.Logf("--confirm: %d requests for %d Stale locks, %.2f a lock", confirm, stale, perLock)
	if perLock > 4.5 {
		t.Errorf("--confirm sent %d requests for %d locks (%.2f a lock), want at most 4.5 a lock", confirm, stale, perLock)
	}
	if left := staleLockNames(t, kc); len(left) != 0 {
		t.Errorf("Stale locks left after --confirm: %v", left)
	}
	for _, r := range keep {
		if rv := getLease(t, r).ResourceVersion; rv != kept[r.Name] {
			t.Errorf("%s's lock, not Stale, was written: resourceVersion %s -> %s", r.Name, kept[r.Name], rv)
		}
	}
}

// staleLockNames lists the names of the Stale locks in the kubeconfig's
// namespace, as locks reads them.
func staleLockNames(t *testing.T, kubeconfig string) []string {
	t.Helper()
	res := captf(t, kubeconfig, "locks", "--verdict", "Stale", "-o", "json")
	if res.code != 0 {
		t.Fatalf("locks: exit %d: %s", res.code, res.err)
	}
	var list struct{ Items []v1alpha1.Lock }
	if err := json.Unmarshal([]byte(res.out), &list); err != nil {
		t.Fatalf("locks -o json: %v", err)
	}
	var names []string
	for _, l := range list.Items {
		names = append(names, l.Name)
	}
	return names
}
