package e2e

// The runner replay of issue 26: the model of CAPTF stops where its Job
// starts; from there the real runtimes are the oracle. For every
// conformance row whose lock CAPTF's next Job clears (captfClears), and
// every row whose lock it does not clear only because of what the
// runtime does (cfRow.replay), CAPTF's runner steps are run against a
// copy of the row's lock Lease and state Secrets, as the row left them,
// with terraform (v1.11.4, on PATH) and OpenTofu (v1.12.6, the test-bed's):
// init, then force-unlock -force <ID>, with the ID CAPTF takes (the lock
// info's, else holderIdentity), counting "state is already unlocked" and
// "does not match existing lock" as success, as CAPTF's runner does
// (internal/runner/plan.go Steps at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517). Each replay has a namespace
// of its own, so the replays are independent of each other and of the
// rows, and run in parallel.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// cfReplay is the runner step of a row whose lock stays because of the
// runtime, and what that step's output shows.
type cfReplay struct {
	step string // "init" or "force-unlock"
	// output is what the step says, one of these texts.
	output []string
	// clearedBy names the runtimes ("tofu", "terraform tofu") whose
	// steps do clear the lock of a row whose captfClears is false for
	// another reason: the other runtime's steps do not, or CAPTF may not
	// start the Job; "" for none.
	clearedBy string
	// accepts names the runtimes whose failed force-unlock step CAPTF's
	// runner accepts, as it does an answer it finds in the last 64 KiB
	// of the step's stderr ("does not match existing lock"), for a row
	// whose step is force-unlock; "" for none.
	accepts string
}

// runnerTail is how much of a step's stderr CAPTF's runner keeps and
// searches for the answers it accepts (internal/runner/exec.go MaxTail
// at 16ca67d3711e1eb42cfbf3acd89c0d42f6970517).
const runnerTail = 64 << 10

// runnerAccepts is whether CAPTF's runner counts a force-unlock step
// that exited with err and wrote stderr as a success: exit 0, or one of
// its OKIf answers in the kept tail (exec.go StepResult.Failed: a
// case-sensitive substring; plan.go Steps' OKIf).
func runnerAccepts(stderr string, err error) bool {
	if err == nil {
		return true
	}
	if len(stderr) > runnerTail {
		stderr = stderr[len(stderr)-runnerTail:]
	}
	return strings.Contains(stderr, "state is already unlocked") || strings.Contains(stderr, "does not match existing lock")
}

// replayRow is a row's world, taken when the row was asserted.
type replayRow struct {
	name, cite string
	owner      object.Ref
	// cluster is the Cluster CAPTF finds for the owner, whose name it
	// passes in the backend labels (state.BackendLabels).
	cluster string
	lease   *coordinationv1.Lease
	secrets []corev1.Secret
	clears  bool
	replay  *cfReplay
	reason  string
	// pluginID is the ID the plugin says CAPTF force-unlocks (the lock
	// info's ID, else holderIdentity).
	pluginID string
}

// captureReplay takes the row's lock Lease and state Secrets when the row
// is one the replay covers.
func captureReplay(t *testing.T, c cfRow, l v1alpha1.Lock) (replayRow, bool) {
	t.Helper()
	if (!l.CAPTFClears && c.replay == nil) || c.owner == nil {
		return replayRow{}, false
	}
	ctx := context.Background()
	lease, err := admin.Kube.CoordinationV1().Leases(c.ns).Get(ctx, c.lease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := admin.Kube.CoreV1().Secrets(c.ns).List(ctx, metav1.ListOptions{LabelSelector: "tfstate=true,tfstateSecretSuffix=" + c.owner.Suffix()})
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := admin.ClusterName(ctx, *c.owner)
	if err != nil {
		t.Fatal(err)
	}
	pluginID := ""
	if l.Lock != nil {
		pluginID = cmp.Or(l.Lock.InfoID, l.Lock.ID)
	}
	return replayRow{name: c.name, cite: c.cite, owner: *c.owner, cluster: cluster, lease: lease, secrets: secrets.Items, clears: l.CAPTFClears, replay: c.replay, reason: l.Reason, pluginID: pluginID}, true
}

// runReplays replays every row with both runtimes, in parallel.
func runReplays(t *testing.T, rows []replayRow) {
	var held int
	for _, rp := range rows {
		if rp.replay != nil {
			held++
		}
	}
	t.Logf("replaying %d rows (%d whose lock CAPTF clears, %d it does not because of the runtime) with terraform and OpenTofu", len(rows), len(rows)-held, held)
	for n, rp := range rows {
		for _, rt := range runtimes() {
			t.Run(rt.name+"/"+rp.name, func(t *testing.T) {
				t.Parallel()
				rp.run(t, rt, fmt.Sprintf("replay-%d-%s", n, rt.name))
			})
		}
	}
}

// run replays CAPTF's runner steps in namespace ns, on a copy of the
// row's Lease and Secrets, and checks the lock against the row.
func (rp replayRow) run(t *testing.T, rt runtime, ns string) {
	ctx := context.Background()
	if err := admin.Namespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	l := rp.lease.DeepCopy()
	l.ObjectMeta = metav1.ObjectMeta{Name: l.Name, Namespace: ns, Labels: l.Labels, Annotations: l.Annotations}
	if _, err := admin.Kube.CoordinationV1().Leases(ns).Create(ctx, l, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range rp.secrets {
		s.ObjectMeta = metav1.ObjectMeta{Name: s.Name, Namespace: ns, Labels: s.Labels, Annotations: s.Annotations}
		if _, err := admin.Kube.CoreV1().Secrets(ns).Create(ctx, &s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The backend configuration CAPTF's Job runs with: namespace,
	// secret_suffix and the labels map CAPTF computes for the object
	// (state.BackendLabels of its kind, its name and the name of the
	// Cluster it finds for it), whatever labels its state Secrets carry.
	labels := testbed.BackendLabels(rp.owner, rp.cluster)
	dir, err := rt.tool.Workdir(testbed.Backend{Namespace: ns, Suffix: rp.owner.Suffix(), Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	// The next Job's pod, by CAPTF's naming.
	host := cfJobName(rp.owner.Kind.Code, rp.owner.Name, "drift", 2, "5e1f0a") + "-rpl4y"
	id, ok := captfID(rp.lease)
	switch {
	case !ok:
		t.Fatalf("%s: CAPTF passes no --force-unlock for this lock: its checkLock cannot decode the lock info, so no Job of it would run these steps", rp.cite)
	case id != rp.pluginID:
		t.Fatalf("%s: the plugin says CAPTF force-unlocks %q, CAPTF's decode gives %q", rp.cite, rp.pluginID, id)
	}
	steps := map[string]string{}
	out, err := rt.tool.RunAs(ctx, dir, host, "init", "-input=false", "-no-color", "-lock-timeout=5s")
	steps["init"] = out
	ran := fmt.Sprintf("init: %v", err)
	accepted := false
	if err == nil {
		var stdout, stderr string
		stdout, stderr, err = rt.tool.Step(ctx, dir, host, "force-unlock", "-force", id)
		out = stdout + stderr
		if err != nil && out == "" {
			// The step did not start (an argument no process takes): its
			// error is all it says.
			out = err.Error()
		}
		steps["force-unlock"] = out
		accepted = runnerAccepts(stderr, err)
		ran += fmt.Sprintf("; force-unlock -force %s: %v (CAPTF's runner accepts it: %v)", cut(id, 80), err, accepted)
	}
	after, err := admin.Kube.CoordinationV1().Leases(ns).Get(ctx, l.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stillHeld := after.Spec.HolderIdentity != nil
	clears := rp.clears || slices.Contains(strings.Fields(rp.replay.clearedByOf()), rt.name)
	switch {
	case clears && stillHeld:
		var names []string
		for _, s := range rp.secrets {
			names = append(names, fmt.Sprintf("%s (%d keys)", s.Name, len(s.Data)))
		}
		t.Errorf("%s\n  captfClears is %v (cleared by %q), but %s %s left the lock held by %q\n  %s\n  state Secrets copied: %v\n  init:\n%s\n  force-unlock:\n%s", rp.cite, rp.clears, rp.replay.clearedByOf(), rt.name, rt.version, *after.Spec.HolderIdentity, ran, names, steps["init"], steps["force-unlock"])
	case !clears && !stillHeld:
		t.Errorf("%s\n  captfClears is false (%q), but %s %s cleared the lock\n  %s", rp.cite, rp.reason, rt.name, rt.version, ran)
	case !clears:
		said := false
		for _, o := range rp.replay.output {
			said = said || strings.Contains(steps[rp.replay.step], o)
		}
		if out, ok := steps[rp.replay.step]; !ok || !said {
			t.Errorf("%s\n  %s %s: step %s did not say %q\n  %s\n%s", rp.cite, rt.name, rt.version, rp.replay.step, rp.replay.output, ran, out)
		}
		if _, ok := steps["force-unlock"]; ok != (rp.replay.step == "force-unlock") {
			t.Errorf("%s\n  %s %s: the steps ran as %s, want them to stop at %s", rp.cite, rt.name, rt.version, ran, rp.replay.step)
		}
		// Whether the runner takes the failed step for a success decides
		// the reason's words ("counts that as success", "does not
		// accept"), so it is held to the row too.
		if want := slices.Contains(strings.Fields(rp.replay.accepts), rt.name); rp.replay.step == "force-unlock" && accepted != want {
			t.Errorf("%s\n  %s %s: CAPTF's runner accepts the force-unlock step: %v, the row says %v\n  %s", rp.cite, rt.name, rt.version, accepted, want, ran)
		}
	}
}

// clearedByOf is clearedBy, "" for a row without a replay step.
func (r *cfReplay) clearedByOf() string {
	if r == nil {
		return ""
	}
	return r.clearedBy
}

// captfID is the ID CAPTF's Job force-unlocks, decoded as CAPTF's lock
// check decodes the lock info (internal/locks/stale.go Check at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517: ID, Operation, Who, Version
// and a time.Time Created, any error dropping the whole info): the info's
// ID where it has one, else holderIdentity. ok is false where CAPTF
// passes none: the info does not decode, so CAPTF sees no holder and no
// Job gets --force-unlock.
func captfID(l *coordinationv1.Lease) (id string, ok bool) {
	var info struct {
		ID, Operation, Who, Version string
		Created                     time.Time
	}
	raw, annotated := l.Annotations["app.terraform.io/lock-info"]
	if !annotated || json.Unmarshal([]byte(raw), &info) != nil || l.Spec.HolderIdentity == nil {
		return "", false
	}
	return cmp.Or(info.ID, *l.Spec.HolderIdentity), true
}

// cut is s, cut to n bytes with "…" after, for a test's message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
