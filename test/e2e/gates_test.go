package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// A stale lock clears with a Job CAPTF starts. Where no Job starts (a
// paused object, a paused Cluster) the table, the JSON and explain say
// CAPTF will not clear it, and why; under a Retain deletion no Job starts
// either, but CAPTF deletes the Lease itself, and all three say so; an
// object with nothing in the way still gets "CAPTF clears it". Each
// object is made with what CAPTF reads around it (testbed.World), so
// that "clears" is what CAPTF would do there.
func TestGatesKeepStaleLocks(t *testing.T) {
	ctx := context.Background()
	ns := "gates"
	kc := kubeconfigIn(t, ns)
	stale := func(name string, s testbed.Seeded) object.Ref {
		r := object.Ref{Kind: object.TerraformCluster, Namespace: ns, Name: name}
		s.World = &testbed.World{}
		if err := admin.Seed(ctx, r, s); err != nil {
			t.Fatal(err)
		}
		syntheticLock(t, r, "abababab-0000-0000-0000-000000000000", "root@captf-c-"+name+"-apply-a1-d72d2a-x7k2p", nil)
		return r
	}
	open := stale("open", testbed.Seeded{})
	stale("paused", testbed.Seeded{Annotations: map[string]string{"cluster.x-k8s.io/paused": ""}})
	// The Cluster is paused; CAPTF's preamble wrote Paused from it.
	pausedCluster := stale("paused-cluster", testbed.Seeded{Status: map[string]any{"conditions": []any{
		testbed.Condition("Paused", "True", "Paused", "Cluster spec.paused is set to true", time.Now()),
	}}})
	if _, err := admin.Dynamic.Resource(testbed.ClusterGVR).Namespace(ns).Patch(ctx, "cl-"+pausedCluster.Suffix(), types.MergePatchType, []byte(`{"spec":{"paused":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	retain := stale("retain", testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Retain"}, Delete: []string{}})

	want := map[string]string{
		"paused":         "the object is paused (annotation cluster.x-k8s.io/paused)",
		"paused-cluster": "the object is paused (condition Paused: True/Paused)",
	}
	list := locksJSON(t, kc)
	byObject := map[string]v1alpha1.Lock{}
	for _, l := range list.Items {
		if l.Object != nil {
			byObject[l.Object.Name] = l
		}
	}
	if l := byObject[open.Name]; l.Verdict != v1alpha1.Stale || !l.CAPTFClears || !strings.Contains(l.Reason, "CAPTF clears it with the object's next Job") || l.CAPTFDeletesLease != nil {
		t.Errorf("open: %s %v %q", l.Verdict, l.CAPTFClears, l.Reason)
	}
	table := captf(t, kc, "locks", "-o", "wide")
	for name, why := range want {
		l := byObject[name]
		if l.Verdict != v1alpha1.Stale || l.CAPTFClears || !strings.Contains(l.Reason, "CAPTF will not clear it: "+why) || l.CAPTFDeletesLease != nil {
			t.Errorf("%s: %s captfClears=%v %q", name, l.Verdict, l.CAPTFClears, l.Reason)
		}
		if !strings.Contains(rowLine(table.out, "terraformcluster/"+name), "CAPTF will not clear it: "+why) {
			t.Errorf("%s: table row lacks the gate:\n%s", name, table.out)
		}
		x := explainJSON(t, "terraformcluster/"+name, "-n", ns)
		if x.CAPTFClears || !strings.HasPrefix(x.ControllerAction, "Nothing: ") || !strings.Contains(x.ControllerAction, why) {
			t.Errorf("%s: explain captfClears=%v, action %q", name, x.CAPTFClears, x.ControllerAction)
		}
	}
	// Under Retain no Job starts, but CAPTF's Retain deletes the Lease
	// itself: the lock does not stay (retain.go Retain, state.DeleteLock).
	l := byObject[retain.Name]
	const why = "the object is being deleted under deletionPolicy Retain (spec.deletionPolicy): no Job starts"
	if l.Verdict != v1alpha1.Stale || l.CAPTFClears || !strings.Contains(l.Reason, "no Job of CAPTF's force-unlocks it: "+why) ||
		!strings.Contains(l.Reason, "CAPTF deletes this lock Lease itself") || l.CAPTFDeletesLease == nil || l.CAPTFDeletesLease.Path != "Retain" || !l.CAPTFDeletesLease.Certain {
		t.Errorf("retain: %s captfClears=%v %+v %q", l.Verdict, l.CAPTFClears, l.CAPTFDeletesLease, l.Reason)
	}
	if !strings.Contains(rowLine(table.out, "terraformcluster/retain"), "CAPTF deletes this lock Lease itself") {
		t.Errorf("retain: table row lacks the deletion:\n%s", table.out)
	}
	x := explainJSON(t, "terraformcluster/retain", "-n", ns)
	if x.CAPTFClears || !strings.HasPrefix(x.ControllerAction, "No Job: "+why) || strings.Contains(x.ControllerAction, "stays") ||
		x.CAPTFDeletesLease == nil || *x.CAPTFDeletesLease != *l.CAPTFDeletesLease {
		t.Errorf("retain: explain captfClears=%v %+v, action %q", x.CAPTFClears, x.CAPTFDeletesLease, x.ControllerAction)
	}
	out := flat(explainText(t, "terraformcluster/retain", "-n", ns))
	if !strings.Contains(out, "What CAPTF does next: No Job: "+why) || !strings.Contains(out, "its own unlock then fails (the Lease is not found)") {
		t.Errorf("retain: human output:\n%s", out)
	}
}

func rowLine(table, obj string) string {
	for _, l := range strings.Split(table, "\n") {
		if strings.Contains(l, obj+" ") {
			return l
		}
	}
	return ""
}

// explain shows the active Job as CAPTF picks it: its name, op, attempt.
func TestExplainShowsTheActiveJob(t *testing.T) {
	ctx := context.Background()
	ns := "active-job"
	r := newObject(t, ns, object.TerraformMachine, "busy")
	job := runner.JobName(r.Kind, r.Name, "drift", 4, "0a0b0c")
	if err := admin.RunnerJob(ctx, r, job, false); err != nil {
		t.Fatal(err)
	}
	syntheticLock(t, r, "cdcdcdcd-0000-0000-0000-000000000000", "root@"+runner.JobName(r.Kind, r.Name, "apply", 3, "d72d2a")+"-x7k2p", nil)
	x := explainJSON(t, "terraformmachine/busy", "-n", ns)
	if j := x.Context.ActiveJob; j == nil || j.Name != job || j.Operation != "drift" || j.Attempt != 4 || j.From != "jobs" {
		t.Fatalf("active job %+v", j)
	}
	out := flat(explainText(t, "terraformmachine/busy", "-n", ns))
	if !strings.Contains(out, "Active Job: "+job+" (drift, attempt 4") {
		t.Errorf("human output:\n%s", out)
	}
}
