package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// finishedPod creates a runner pod on a node and records how it ended.
func finishedPod(t *testing.T, r object.Ref, name string, status corev1.PodStatus) {
	t.Helper()
	ctx := context.Background()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.Namespace, Labels: testbed.OwnerLabels(r)},
		Spec: corev1.PodSpec{NodeName: "node-a", RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "runner", Image: "example.invalid/runner:test"}}},
	}
	p, err := admin.Kube.CoreV1().Pods(r.Namespace).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status = status
	if _, err := admin.Kube.CoreV1().Pods(r.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func deathOf(t *testing.T, ns string, r object.Ref) *v1alpha1.Death {
	t.Helper()
	for _, l := range locksJSON(t, kubeconfigIn(t, ns)).Items {
		if l.Suffix == r.Suffix() {
			if l.Verdict != v1alpha1.Stale || l.Holder == nil {
				t.Fatalf("%s: %s %+v", r, l.Verdict, l.Holder)
			}
			return l.Holder.Death
		}
	}
	t.Fatalf("no lock for %s", r)
	return nil
}

func TestRunnerDeath(t *testing.T) {
	ctx := context.Background()
	ns := "death"
	finished := metav1.NewTime(time.Now().Add(-3 * time.Minute).Truncate(time.Second))

	oom := newObject(t, ns, object.TerraformCluster, "oom")
	oomPod := "captf-c-oom-apply-a1-d72d2a-x7k2p"
	finishedPod(t, oom, oomPod, corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "runner", Image: "example.invalid/runner:test", ImageID: "sha256:0",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", FinishedAt: finished}},
	}}})
	syntheticLock(t, oom, "d0d0d0d0-0000-0000-0000-000000000001", "root@"+oomPod, nil)

	evicted := newObject(t, ns, object.TerraformMachine, "evicted")
	evictedPod := "captf-m-evicted-refresh-a2-d72d2a-x7k2p"
	finishedPod(t, evicted, evictedPod, corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."})
	syntheticLock(t, evicted, "d0d0d0d0-0000-0000-0000-000000000002", "root@"+evictedPod, nil)
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: evictedPod + ".evicted", Namespace: ns},
		EventTime:  metav1.NewMicroTime(time.Now().Add(-time.Minute)), ReportingController: "kubelet", ReportingInstance: "node-a",
		Action: "Evict", Reason: "Evicted", Type: corev1.EventTypeWarning, Note: "The node was low on resource: memory.",
		Regarding: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Name: evictedPod, Namespace: ns},
	}
	if _, err := admin.Kube.EventsV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The pod is gone; its Job failed on its deadline.
	deadline := newObject(t, ns, object.TerraformCluster, "deadline")
	job := "captf-c-deadline-apply-a1-d72d2a"
	if err := admin.RunnerJob(ctx, deadline, job, false); err != nil {
		t.Fatal(err)
	}
	j, err := admin.Kube.BatchV1().Jobs(ns).Get(ctx, job, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	j.Status.StartTime = &now
	j.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded", Message: "Job was active longer than specified deadline", LastTransitionTime: now},
		{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded", Message: "Job was active longer than specified deadline", LastTransitionTime: now},
	}
	if _, err := admin.Kube.BatchV1().Jobs(ns).UpdateStatus(ctx, j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	syntheticLock(t, deadline, "d0d0d0d0-0000-0000-0000-000000000003", "root@"+job+"-x7k2p", nil)

	// Nothing left: neither pod nor Job.
	pruned := newObject(t, ns, object.TerraformCluster, "pruned")
	syntheticLock(t, pruned, "d0d0d0d0-0000-0000-0000-000000000004", "root@captf-c-pruned-apply-a1-d72d2a-x7k2p", nil)

	if d := deathOf(t, ns, oom); d == nil || d.Reason != "OOMKilled" || d.ExitCode == nil || *d.ExitCode != 137 || d.Container != "runner" ||
		d.Node != "node-a" || d.FinishedAt == nil || !d.FinishedAt.Equal(finished.Time) || d.Summary != "container runner OOMKilled (exit 137) on node node-a" {
		t.Errorf("OOMKilled: %+v", d)
	}
	if d := deathOf(t, ns, evicted); d == nil || d.PodReason != "Evicted" || d.Summary != "pod Evicted: The node was low on resource: memory. on node node-a" {
		t.Errorf("Evicted: %+v", d)
	}
	if d := deathOf(t, ns, deadline); d == nil || d.Job != job || d.JobCondition != "DeadlineExceeded" || !strings.HasPrefix(d.Summary, "pod gone; Job "+job+" failed: DeadlineExceeded") {
		t.Errorf("DeadlineExceeded: %+v", d)
	}
	if d := deathOf(t, ns, pruned); d == nil || d.Summary != "pod and Job pruned; no record left" {
		t.Errorf("pruned: %+v", d)
	}

	kc := kubeconfigIn(t, ns)
	wide := captf(t, kc, "locks", "-o", "wide")
	if !strings.Contains(wide.out, "container runner OOMKilled (exit 137) on node node-a") || !strings.Contains(wide.out, "pod and Job pruned; no record left") {
		t.Errorf("wide:\n%s", wide.out)
	}
	res := captf(t, kc, "explain", "terraformmachine/evicted")
	if out := flat(res.out); !strings.Contains(out, "Runner end: pod Evicted: The node was low on resource: memory.") ||
		!regexp.MustCompile(`Runner event: Evicted \(Warning\) \d+s ago: The node was low on resource: memory\.`).MatchString(out) {
		t.Errorf("explain:\n%s", res.out)
	}
	// One screen: 40 lines, and one more for the connection flags the
	// printed command carries (the test-bed's kubeconfig path is long).
	if n := len(strings.Split(strings.TrimRight(res.out, "\n"), "\n")); n > 41 {
		t.Errorf("explain is %d lines:\n%s", n, res.out)
	}
}
