package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

func explainJSON(t *testing.T, args ...string) *v1alpha1.Explanation {
	t.Helper()
	return explainJSONIn(t, verdictsNS, args...)
}

func explainJSONIn(t *testing.T, ns string, args ...string) *v1alpha1.Explanation {
	t.Helper()
	res := captf(t, kubeconfigIn(t, ns), append([]string{"explain", "-o", "json"}, args...)...)
	if res.code != 0 {
		t.Fatalf("explain %v: exit %d: %s", args, res.code, res.err)
	}
	var x v1alpha1.Explanation
	if err := json.Unmarshal([]byte(res.out), &x); err != nil {
		t.Fatalf("decoding %q: %v", res.out, err)
	}
	return &x
}

// adviceText is advice as a reader sees it: each comment as "# ...",
// then its command.
func adviceText(advice []v1alpha1.Advice) string {
	var out []string
	for _, a := range advice {
		if a.Comment != "" {
			out = append(out, "# "+a.Comment)
		}
		if a.Command != "" {
			out = append(out, a.Command)
		}
	}
	return strings.Join(out, "\n")
}

// conn are the connection flags the plugin run with kubeconfigIn(ns)
// prints in its advice: that kubeconfig, and its context.
func conn(t *testing.T, ns string) string {
	return "--kubeconfig " + kubeconfigIn(t, ns) + " --context testbed"
}

func explainText(t *testing.T, args ...string) string {
	t.Helper()
	res := captf(t, kubeconfigIn(t, verdictsNS), append([]string{"explain"}, args...)...)
	if res.code != 0 {
		t.Fatalf("explain %v: exit %d: %s", args, res.code, res.err)
	}
	return res.out
}

func hasStep(x *v1alpha1.Explanation, check, observed, result string) bool {
	for _, s := range x.Steps {
		if strings.Contains(s.Check, check) && strings.Contains(s.Observed, observed) && strings.Contains(s.Result, result) {
			return true
		}
	}
	return false
}

// explain gives the verdict locks gives, for every lock of the scenario.
func TestExplainAgreesWithLocks(t *testing.T) {
	seedVerdicts(t)
	for _, l := range locksJSON(t, kubeconfigIn(t, verdictsNS)).Items {
		x := explainJSON(t, "lease/"+l.Name)
		if x.Verdict != l.Verdict || x.Reason != l.Reason || x.CAPTFClears != l.CAPTFClears {
			t.Errorf("%s: explain %s %q, locks %s %q", l.Name, x.Verdict, x.Reason, l.Verdict, l.Reason)
		}
		if x.Kind != "Explanation" || x.ControllerAction == "" || len(x.Steps) < 2 {
			t.Errorf("%s: %+v", l.Name, x)
		}
	}
}

func TestExplainStaleRealLock(t *testing.T) {
	seedVerdicts(t)
	x := explainJSON(t, "terraformcluster/stale-gone")
	if !hasStep(x, "Is a Job of the object active?", "Job captf-c-stale-gone-refresh-a1-0f0f0f is active", "defers") ||
		!hasStep(x, "Is a holder set?", staleID, "held") ||
		!hasStep(x, `Is "captf-c-stale-gone-apply-a1-d72d2a-x7k2p" a pod of terraformcluster/stale-gone's own runner Jobs?`, "op apply, attempt 1, hash d72d2a", "yes") ||
		!hasStep(x, "Does the holder pod exist?", "not found", "stale") {
		t.Errorf("steps %+v", x.Steps)
	}
	if !strings.Contains(x.ControllerAction, "force-unlock -force "+staleID) || !strings.Contains(x.ControllerAction, "is active") {
		t.Errorf("controller action %q", x.ControllerAction)
	}
	// Last, the look at its Cluster API Cluster (its world's).
	cluster := testbed.World{}.ClusterOf(object.Ref{Kind: object.TerraformCluster, Namespace: verdictsNS, Name: "stale-gone"})
	if got := adviceText(x.Advice); !strings.HasPrefix(got, "# nothing is required, the next Job of the object clears it. To clear it now:\nkubectl captf "+conn(t, verdictsNS)+" unlock terraformcluster/stale-gone -n verdicts --id '"+staleID+"' --confirm\n"+
		"# to see the Cluster this lock belongs to, and its conditions, with clusterctl:\nclusterctl describe cluster "+cluster+" -n verdicts --show-conditions all --kubeconfig ") || strings.Count(got, "\n") != 3 {
		t.Errorf("advice %q", got)
	}
	if x.Context.RunLease == nil || x.Context.RunLease.Holder != "captf-c-stale-gone-refresh-a1-0f0f0f" {
		t.Errorf("run lease %+v", x.Context.RunLease)
	}
	// The real terraform wrote a state Secret (init) for this suffix.
	suffix := ref(object.TerraformCluster, "stale-gone").Suffix()
	if len(x.Context.StateSecrets) != 1 || x.Context.StateSecrets[0] != "tfstate-default-"+suffix {
		t.Errorf("state secrets %v", x.Context.StateSecrets)
	}
}

func TestExplainPhases(t *testing.T) {
	seedVerdicts(t)
	x := explainJSON(t, "terraformcluster/terminating")
	if x.Verdict != v1alpha1.Live || !hasStep(x, "Has the pod finished?", "Running and terminating", "alive") {
		t.Errorf("terminating: %s %+v", x.Verdict, x.Steps)
	}
	if !strings.Contains(adviceText(x.Advice), "kubectl "+conn(t, verdictsNS)+" logs -n verdicts captf-c-terminating-destroy-a1-d72d2a-x7k2p") {
		t.Errorf("live advice %q", adviceText(x.Advice))
	}
	for name, phase := range map[string]string{"pending": "Pending", "phase-unknown": "Unknown"} {
		if x := explainJSON(t, "terraformmachine/"+name); x.Verdict != v1alpha1.Live || !hasStep(x, "Does the holder pod exist?", phase, "exists") {
			t.Errorf("%s: %s %+v", name, x.Verdict, x.Steps)
		}
	}
	pool := "terraformmachinepool/prod-eu-west-1-workers-spot-pool-large"
	if x := explainJSON(t, pool); x.Verdict != v1alpha1.Stale || !hasStep(x, "Has the pod finished?", "phase Failed", "stale") {
		t.Errorf("failed: %s %+v", x.Verdict, x.Steps)
	}
	if x := explainJSON(t, "terraformcluster/succeeded"); x.Verdict != v1alpha1.Stale || !hasStep(x, "Has the pod finished?", "phase Succeeded", "stale") {
		t.Errorf("succeeded: %s", x.Verdict)
	}
}

func TestExplainForeignAndUnknown(t *testing.T) {
	seedVerdicts(t)
	x := explainJSON(t, "terraformmachine/workstation")
	if x.Verdict != v1alpha1.Foreign || !strings.Contains(x.ControllerAction, "never unlocks it through a Job") ||
		x.Advice[len(x.Advice)-1].Command != "kubectl captf "+conn(t, verdictsNS)+" unlock terraformmachine/workstation -n verdicts --id '"+x.Lock.ID+"' --confirm" {
		t.Errorf("workstation: %s %q %q", x.Verdict, x.ControllerAction, x.Advice)
	}
	// Another object's pod: the look-alike is explained.
	x = explainJSON(t, "terraformmachine/web")
	if !hasStep(x, `Is "captf-m-web-1-apply-a1-d72d2a-x7k2p" a pod of terraformmachine/web's own runner Jobs?`, `its Job would be named "captf-m-web-apply-a1-d72d2a"`, "no") {
		t.Errorf("look-alike steps %+v", x.Steps)
	}
	x = explainJSON(t, "terraformcluster/not-json")
	if x.Verdict != v1alpha1.Unknown || !hasStep(x, "Does the lock info parse?", "does not parse", "no") {
		t.Errorf("unknown: %s %+v", x.Verdict, x.Steps)
	}
	// The human output of a foreign lock fits one screen: 40 lines of 100 columns.
	out := explainText(t, "terraformmachine/web")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > 40 {
		t.Errorf("%d lines:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if len(l) > 100 {
			t.Errorf("%d columns: %q", len(l), l)
		}
	}
	for _, want := range []string{"How CAPTF's controller checks it:", "Verdict:  Foreign:", "What CAPTF does next:", "What you can do:", "Context:"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// The object's condition and events are shown, and a condition that
// contradicts the Lease is called out.
func TestExplainContextAndDisagreement(t *testing.T) {
	seedVerdicts(t)
	ctx := context.Background()
	r := ref(object.TerraformCluster, "unlocked")
	u, err := admin.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.Object["status"] = map[string]any{"conditions": []any{map[string]any{
		"type": "StateReadable", "status": "False", "reason": "StateLocked",
		"message":            "The state lock 9f9f9f9f-0000-0000-0000-000000000000 is held by alice@laptop (OperationTypeApply) since 2026-11-30T10:00:00Z; every Job waits lockTimeoutSeconds for it and fails.",
		"lastTransitionTime": time.Now().Add(-20 * time.Minute).UTC().Format(time.RFC3339),
	}}}
	if _, err := admin.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "unlocked.statelocked", Namespace: r.Namespace},
		EventTime:  metav1.NewMicroTime(time.Now().Add(-12 * time.Minute)), ReportingController: "captf.io/controller", ReportingInstance: "captf-controller-0",
		Action: "CheckState", Reason: "StateLocked", Type: corev1.EventTypeWarning, Note: "state locked by alice@laptop",
		Regarding: corev1.ObjectReference{APIVersion: object.Group + "/" + object.Version, Kind: r.Kind.Name, Name: r.Name, Namespace: r.Namespace, UID: u.GetUID()},
	}
	if _, err := admin.Kube.EventsV1().Events(r.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	x := explainJSON(t, "terraformcluster/unlocked")
	if c := x.Context.StateReadable; c == nil || c.Status != "False" || c.Reason != "StateLocked" || c.LastTransitionTime == nil {
		t.Errorf("condition %+v", c)
	}
	if len(x.Context.Events) != 1 || x.Context.Events[0].Reason != "StateLocked" || x.Context.Events[0].Note != "state locked by alice@laptop" {
		t.Errorf("events %+v", x.Context.Events)
	}
	if !strings.Contains(x.Disagreement, "says StateLocked, but the lock is free now") ||
		!strings.Contains(adviceText(x.Advice), "kubectl "+conn(t, verdictsNS)+" annotate terraformcluster/unlocked -n verdicts 'captf.io/unlocked-at=") {
		t.Errorf("disagreement %q", x.Disagreement)
	}
	// Ages of 10 minutes and more are shown in whole minutes, so a slow
	// run (-race on a busy machine) cannot add a second to them.
	out := explainText(t, "terraformcluster/unlocked")
	for _, want := range []string{"StateReadable: False/StateLocked, 20m ago: The state lock 9f9f9f9f", "Event:         StateLocked (Warning) 12m ago: state locked by alice@laptop", "Note: The object's condition says StateLocked"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// Arguments resolve as kubectl resolves them.
func TestExplainArguments(t *testing.T) {
	seedVerdicts(t)
	for _, args := range [][]string{
		{"terraformcluster/stale-gone"}, {"terraformclusters/stale-gone"}, {"TerraformCluster/stale-gone"},
		{"terraformclusters.infrastructure.cluster.x-k8s.io/stale-gone"}, {"terraformcluster.infrastructure.cluster.x-k8s.io/stale-gone"}, {"terraformcluster", "stale-gone"},
	} {
		if x := explainJSON(t, args...); x.Object == nil || x.Object.Name != "stale-gone" || x.Verdict != v1alpha1.Stale {
			t.Errorf("%v: %+v", args, x.Object)
		}
	}
	// A lock with no object, through its Lease.
	orphan := object.LockLeaseName("default", ref(object.TerraformCluster, "orphan").Suffix())
	if x := explainJSON(t, "lease/"+orphan); x.Object != nil || x.Verdict != v1alpha1.Foreign || !strings.Contains(x.Reason, "no CAPTF object owns suffix") {
		t.Errorf("orphan: %+v %s", x.Object, x.Reason)
	}
	// The deleted object's lock, through its Lease.
	deleted := object.LockLeaseName("default", ref(object.TerraformCluster, "deleted").Suffix())
	if x := explainJSON(t, "lease/"+deleted); !strings.Contains(x.ControllerAction, "no longer exists, so no controller will ever clear this lock") {
		t.Errorf("deleted: %q", x.ControllerAction)
	}
	// An object that was never applied has no Lease: nothing holds it.
	if err := admin.Object(context.Background(), ref(object.TerraformCluster, "fresh")); err != nil {
		t.Fatal(err)
	}
	if x := explainJSON(t, "terraformcluster/fresh"); x.Verdict != v1alpha1.Unlocked || !hasStep(x, "Does the Lease exist?", "not found", "not held") {
		t.Errorf("fresh: %s %+v", x.Verdict, x.Steps)
	}
	for _, args := range [][]string{{"terraformcluster/missing"}, {"nosuchkind/x"}, {"lease/captf-run-x"}, {}} {
		res := captf(t, kubeconfigIn(t, verdictsNS), append([]string{"explain"}, args...)...)
		if res.code != 1 || !strings.HasPrefix(res.err, "error: ") || strings.Count(res.err, "\n") != 1 {
			t.Errorf("%v: exit %d %q", args, res.code, res.err)
		}
	}
	res := captf(t, kubeconfigIn(t, verdictsNS), "explain", "terraformcluster/missing")
	if !strings.Contains(res.err, `"missing" not found`) {
		t.Errorf("missing object: %q", res.err)
	}
}

// Object names complete on TAB, from the cluster.
func TestCompletion(t *testing.T) {
	seedVerdicts(t)
	res := captf(t, kubeconfigIn(t, verdictsNS), "__complete", "explain", "terraformcluster/")
	if !strings.Contains(res.out, "terraformcluster/stale-gone\n") || strings.Contains(res.out, "terraformmachine/") {
		t.Errorf("completion:\n%s", res.out)
	}
	res = captf(t, kubeconfigIn(t, verdictsNS), "__complete", "unlock", "lease/")
	if !strings.Contains(res.out, "lease/lock-tfstate-default-") || strings.Contains(res.out, "captf-run-") {
		t.Errorf("lease completion:\n%s", res.out)
	}
}
