package e2e

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// The namespace holding one lock of every verdict and every edge.
const verdictsNS = "verdicts"

func ref(k object.Kind, name string) object.Ref {
	return object.Ref{Kind: k, Namespace: verdictsNS, Name: name}
}

// expectation is what a user checks of one lock.
type expectation struct {
	ref     object.Ref
	noObj   bool // the lock's object is not identified
	verdict v1alpha1.Verdict
	reason  string
	clears  bool
	holder  string // holder.pod when set
	phase   string
}

// evilWho is a Who with a clear-screen escape, a bell and a newline.
const evilWho = "mallory\x1b[2J\x07\nfake@laptop"

// t0 is a lock time of 90 minutes ago, for hand-written lock info.
var t0 = time.Now().Add(-90 * time.Minute)

var (
	seedOnce     sync.Once
	seedErr      error
	expectations []expectation
	machineHost  string
	staleID      string
)

// seedVerdicts builds the scenario once: real terraform locks for the
// cases a real runner or workstation leaves, hand-written Leases (in the
// backend's exact shape) for the shapes terraform never writes itself.
func seedVerdicts(t *testing.T) {
	t.Helper()
	seedOnce.Do(func() { seedErr = seed(context.Background()) })
	if seedErr != nil {
		t.Fatalf("seeding: %v", seedErr)
	}
}

func seed(ctx context.Context) error {
	var err error
	if machineHost, err = os.Hostname(); err != nil {
		return err
	}
	// realLock takes a real terraform lock for an object, with a hostname
	// ("" for this machine's own, as a workstation).
	realLock := func(r object.Ref, host string) (string, error) { return tf.LockAs(ctx, admin.Kube, r, host) }
	info := func(who string) *string {
		s := testbed.LockInfo("6f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b", who, t0)
		return &s
	}
	id := "6f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"
	synthetic := func(r object.Ref, holder *string, info *string) error {
		_, err := admin.LockLease(ctx, r.Namespace, r.Suffix(), testbed.BackendLabels(r, testbed.ObjectCluster), holder, info)
		return err
	}
	pool := ref(object.TerraformMachinePool, "prod-eu-west-1-workers-spot-pool-large")
	steps := []struct {
		exp expectation
		do  func(r object.Ref) error
	}{
		// Real terraform: SIGKILLed runner, its pod gone.
		{expectation{ref: ref(object.TerraformCluster, "stale-gone"), verdict: v1alpha1.Stale, clears: true,
			reason: "holder pod captf-c-stale-gone-apply-a1-d72d2a-x7k2p no longer exists; CAPTF clears it with the object's next Job",
			holder: "captf-c-stale-gone-apply-a1-d72d2a-x7k2p"},
			func(r object.Ref) (err error) {
				staleID, err = realLock(r, "captf-c-stale-gone-apply-a1-d72d2a-x7k2p")
				return err
			}},
		// Real terraform: the runner pod is still Running.
		{expectation{ref: ref(object.TerraformCluster, "live-running"), verdict: v1alpha1.Live,
			reason: "holder pod captf-c-live-running-refresh-a2-0a1b2c-abcde is Running", holder: "captf-c-live-running-refresh-a2-0a1b2c-abcde", phase: "Running"},
			func(r object.Ref) error {
				if _, err := realLock(r, "captf-c-live-running-refresh-a2-0a1b2c-abcde"); err != nil {
					return err
				}
				_, err := admin.RunnerPod(ctx, r, "captf-c-live-running-refresh-a2-0a1b2c-abcde", corev1.PodRunning)
				return err
			}},
		// Real terraform from this machine: a workstation holder.
		{expectation{ref: ref(object.TerraformMachine, "workstation"), verdict: v1alpha1.Foreign,
			reason: "is not a runner pod of terraformmachine/workstation; CAPTF never clears it"},
			func(r object.Ref) error { _, err := realLock(r, ""); return err }},
		// Real terraform: a long name, so the runner pod has the hashed form; OOM-killed (Failed).
		{expectation{ref: pool, verdict: v1alpha1.Stale, clears: true,
			reason: "holder pod captf-mp-60129d0c29257200-restore-a1-6dc941-x7k2p is Failed", holder: "captf-mp-60129d0c29257200-restore-a1-6dc941-x7k2p", phase: "Failed"},
			func(r object.Ref) error {
				if _, err := realLock(r, "captf-mp-60129d0c29257200-restore-a1-6dc941-x7k2p"); err != nil {
					return err
				}
				_, err := admin.RunnerPod(ctx, r, "captf-mp-60129d0c29257200-restore-a1-6dc941-x7k2p", corev1.PodFailed)
				return err
			}},
		// Real terraform init alone leaves the Lease with spec {}.
		{expectation{ref: ref(object.TerraformCluster, "unlocked"), verdict: v1alpha1.Unlocked, reason: "the Lease has no holder"},
			func(r object.Ref) error {
				_, err := tf.Init(ctx, testbed.Backend{Namespace: r.Namespace, Suffix: r.Suffix(), Labels: testbed.BackendLabels(r, testbed.ObjectCluster)})
				return err
			}},
		// Own pods in the other live phases, and terminating.
		{expectation{ref: ref(object.TerraformMachine, "pending"), verdict: v1alpha1.Live, reason: "is Pending", holder: "captf-m-pending-apply-a1-d72d2a-x7k2p", phase: "Pending"},
			func(r object.Ref) error {
				if _, err := admin.RunnerPod(ctx, r, "captf-m-pending-apply-a1-d72d2a-x7k2p", corev1.PodPending); err != nil {
					return err
				}
				return synthetic(r, &id, info("root@captf-m-pending-apply-a1-d72d2a-x7k2p"))
			}},
		{expectation{ref: ref(object.TerraformMachine, "phase-unknown"), verdict: v1alpha1.Live, reason: "is Unknown", phase: "Unknown"},
			func(r object.Ref) error {
				if _, err := admin.RunnerPod(ctx, r, "captf-m-phase-unknown-drift-a1-d72d2a-x7k2p", corev1.PodUnknown); err != nil {
					return err
				}
				return synthetic(r, &id, info("root@captf-m-phase-unknown-drift-a1-d72d2a-x7k2p"))
			}},
		{expectation{ref: ref(object.TerraformCluster, "terminating"), verdict: v1alpha1.Live, reason: "is Running and terminating", phase: "Running"},
			func(r object.Ref) error {
				if err := admin.TerminatingPod(ctx, r, "captf-c-terminating-destroy-a1-d72d2a-x7k2p"); err != nil {
					return err
				}
				return synthetic(r, &id, info("root@captf-c-terminating-destroy-a1-d72d2a-x7k2p"))
			}},
		{expectation{ref: ref(object.TerraformCluster, "succeeded"), verdict: v1alpha1.Stale, clears: true, reason: "is Succeeded", phase: "Succeeded"},
			func(r object.Ref) error {
				if _, err := admin.RunnerPod(ctx, r, "captf-c-succeeded-plan-a1-d72d2a-x7k2p", corev1.PodSucceeded); err != nil {
					return err
				}
				return synthetic(r, &id, info("root@captf-c-succeeded-plan-a1-d72d2a-x7k2p"))
			}},
		// An own pod that lost CAPTF's labels: only a GET by name finds it alive.
		{expectation{ref: ref(object.TerraformCluster, "unlabelled"), verdict: v1alpha1.Live, reason: "is Running", phase: "Running"},
			func(r object.Ref) error {
				if _, err := admin.Pod(ctx, r.Namespace, "captf-c-unlabelled-apply-a1-d72d2a-x7k2p", nil, corev1.PodRunning); err != nil {
					return err
				}
				return synthetic(r, &id, info("root@captf-c-unlabelled-apply-a1-d72d2a-x7k2p"))
			}},
		// Another object's runner pod (web-1's on web's lock), alive.
		{expectation{ref: ref(object.TerraformMachine, "web"), verdict: v1alpha1.Foreign,
			reason: "holder host captf-m-web-1-apply-a1-d72d2a-x7k2p is not a runner pod of terraformmachine/web (that pod exists, Running)",
			holder: "captf-m-web-1-apply-a1-d72d2a-x7k2p", phase: "Running"},
			func(r object.Ref) error {
				web1 := ref(object.TerraformMachine, "web-1")
				if err := admin.Object(ctx, web1); err != nil {
					return err
				}
				if _, err := admin.RunnerPod(ctx, web1, "captf-m-web-1-apply-a1-d72d2a-x7k2p", corev1.PodRunning); err != nil {
					return err
				}
				return synthetic(r, &id, info("root@captf-m-web-1-apply-a1-d72d2a-x7k2p"))
			}},
		// Unreadable holders.
		{expectation{ref: ref(object.TerraformCluster, "no-annotation"), verdict: v1alpha1.Unknown, reason: "no app.terraform.io/lock-info annotation"},
			func(r object.Ref) error { return synthetic(r, &id, nil) }},
		{expectation{ref: ref(object.TerraformCluster, "not-json"), verdict: v1alpha1.Unknown, reason: "the lock info does not parse"},
			func(r object.Ref) error { s := "{ID: oops"; return synthetic(r, &id, &s) }},
		{expectation{ref: ref(object.TerraformCluster, "bad-created"), verdict: v1alpha1.Unknown, reason: "the lock info does not parse"},
			func(r object.Ref) error {
				s := `{"ID":"` + id + `","Operation":"OperationTypeApply","Who":"root@captf-c-bad-created-apply-a1-d72d2a-x7k2p","Created":"26/09/2026 15:53"}`
				return synthetic(r, &id, &s)
			}},
		{expectation{ref: ref(object.TerraformCluster, "empty-holder"), verdict: v1alpha1.Unknown, reason: `holderIdentity is "": Terraform treats the state as locked`},
			func(r object.Ref) error {
				e := ""
				return synthetic(r, &e, info("root@captf-c-empty-holder-apply-a1-d72d2a-x7k2p"))
			}},
		{expectation{ref: ref(object.TerraformCluster, "no-at"), verdict: v1alpha1.Unknown, reason: `has no "@"`},
			func(r object.Ref) error { return synthetic(r, &id, info("captf-c-no-at-apply-a1-d72d2a-x7k2p")) }},
		// Stale, but nothing will clear it: the object is gone, or the IDs differ.
		{expectation{ref: ref(object.TerraformCluster, "deleted"), verdict: v1alpha1.Stale,
			reason: "terraformcluster/deleted no longer exists, so no controller will clear it"},
			func(r object.Ref) error { return synthetic(r, &id, info("root@captf-c-deleted-apply-a1-d72d2a-x7k2p")) }},
		{expectation{ref: ref(object.TerraformCluster, "id-mismatch"), verdict: v1alpha1.Stale,
			reason: "differs from holderIdentity " + id + ", so CAPTF's force-unlock never matches"},
			func(r object.Ref) error {
				s := testbed.LockInfo("00000000-1111-2222-3333-444444444444", "root@captf-c-id-mismatch-apply-a1-d72d2a-x7k2p", time.Now())
				return synthetic(r, &id, &s)
			}},
		// A holder who writes terminal escapes and a newline into Who.
		{expectation{ref: ref(object.TerraformMachine, "escapes"), verdict: v1alpha1.Foreign, reason: "is not a runner pod of terraformmachine/escapes"},
			func(r object.Ref) error { return synthetic(r, &id, info(evilWho)) }},
		// A lock of a suffix no object owns, held from a workstation.
		{expectation{ref: ref(object.TerraformCluster, "orphan"), noObj: true, verdict: v1alpha1.Foreign,
			reason: "no CAPTF object owns suffix " + ref(object.TerraformCluster, "orphan").Suffix()},
			func(r object.Ref) error {
				_, err := admin.LockLease(ctx, r.Namespace, r.Suffix(), nil, &id, info("alice@laptop"))
				return err
			}},
	}
	for _, s := range steps {
		switch {
		case s.exp.ref.Name == "deleted" || s.exp.noObj:
		case s.exp.clears:
			// A lock CAPTF clears: the object in a world in which CAPTF
			// starts its next Job (owner, credentials, state, records).
			if err := admin.Seed(ctx, s.exp.ref, testbed.Seeded{World: &testbed.World{}}); err != nil {
				return err
			}
		default:
			if err := admin.Object(ctx, s.exp.ref); err != nil {
				return err
			}
		}
		if err := s.do(s.exp.ref); err != nil {
			return err
		}
		expectations = append(expectations, s.exp)
	}
	// An active Job on the stale lock's object; CAPTF's own leases beside the locks.
	if err := admin.RunnerJob(ctx, ref(object.TerraformCluster, "stale-gone"), "captf-c-stale-gone-refresh-a1-0f0f0f", false); err != nil {
		return err
	}
	if err := admin.RunnerJob(ctx, ref(object.TerraformCluster, "live-running"), "captf-c-live-running-apply-a1-0f0f0f", true); err != nil {
		return err
	}
	suffix := ref(object.TerraformCluster, "stale-gone").Suffix()
	holder := "captf-c-stale-gone-refresh-a1-0f0f0f"
	for name, kind := range map[string]string{"captf-run-" + suffix: "run", "captf-cluster-0123456789abcdef": "cluster"} {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: verdictsNS, Labels: map[string]string{"captf.io/lease": kind}}}
		l.Spec.HolderIdentity = &holder
		if _, err := admin.Kube.CoordinationV1().Leases(verdictsNS).Create(ctx, l, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// locksJSON runs `locks -o json` and decodes it.
func locksJSON(t *testing.T, kubeconfig string, args ...string) *v1alpha1.LockList {
	t.Helper()
	res := captf(t, kubeconfig, append([]string{"locks", "-o", "json"}, args...)...)
	if res.code != 0 {
		t.Fatalf("locks -o json: exit %d: %s", res.code, res.err)
	}
	return locksJSONFrom(t, res.out)
}

func locksJSONFrom(t *testing.T, out string) *v1alpha1.LockList {
	t.Helper()
	var list v1alpha1.LockList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("decoding %q: %v", out, err)
	}
	return &list
}

func TestVerdictsJSON(t *testing.T) {
	seedVerdicts(t)
	list := locksJSON(t, kubeconfigIn(t, verdictsNS))
	if list.APIVersion != "captf.io/v1alpha1" || list.Kind != "LockList" {
		t.Errorf("list is %s %s", list.APIVersion, list.Kind)
	}
	bySuffix := map[string]v1alpha1.Lock{}
	for _, l := range list.Items {
		if strings.HasPrefix(l.Name, "captf-") {
			t.Errorf("CAPTF's own lease %s listed as a lock", l.Name)
		}
		bySuffix[l.Suffix] = l
	}
	if len(list.Items) != len(expectations) {
		t.Errorf("%d locks listed, want %d", len(list.Items), len(expectations))
	}
	for _, e := range expectations {
		t.Run(e.ref.Name, func(t *testing.T) {
			l, ok := bySuffix[e.ref.Suffix()]
			if !ok {
				t.Fatalf("no lock for %s (suffix %s)", e.ref, e.ref.Suffix())
			}
			if l.Verdict != e.verdict || !strings.Contains(l.Reason, e.reason) || l.CAPTFClears != e.clears {
				t.Errorf("got %s (clears %v): %q\nwant %s (clears %v): %q", l.Verdict, l.CAPTFClears, l.Reason, e.verdict, e.clears, e.reason)
			}
			switch {
			case e.noObj && l.Object != nil:
				t.Errorf("object %+v, want none", l.Object)
			case !e.noObj && (l.Object == nil || l.Object.Kind != e.ref.Kind.Name || l.Object.Name != e.ref.Name):
				t.Errorf("object %+v, want %s", l.Object, e.ref)
			}
			if e.holder != "" && (l.Holder == nil || l.Holder.Pod != e.holder) {
				t.Errorf("holder %+v, want pod %s", l.Holder, e.holder)
			}
			if e.phase != "" && (l.Holder == nil || l.Holder.PodPhase != e.phase || !l.Holder.PodExists) {
				t.Errorf("holder %+v, want phase %s", l.Holder, e.phase)
			}
			if e.verdict == v1alpha1.Unlocked && l.Lock != nil {
				t.Errorf("unlocked lock has lock %+v", l.Lock)
			}
		})
	}
}

// The lock of a real terraform run, as a user reads it in JSON.
func TestRealLockFields(t *testing.T) {
	seedVerdicts(t)
	for _, l := range locksJSON(t, kubeconfigIn(t, verdictsNS)).Items {
		switch l.Suffix {
		case ref(object.TerraformCluster, "stale-gone").Suffix():
			k := l.Lock
			if k == nil || k.ID != staleID || k.InfoID != staleID || k.Operation != "OperationTypeApply" ||
				k.Who != "root@captf-c-stale-gone-apply-a1-d72d2a-x7k2p" || k.Version != "1.11.4" || k.Created == nil {
				t.Errorf("lock %+v", k)
			}
			if time.Since(*k.Created) > 10*time.Minute {
				t.Errorf("created %v is not this run's", k.Created)
			}
			if h := l.Holder; h == nil || !h.OwnPod || h.PodExists || h.Host != "captf-c-stale-gone-apply-a1-d72d2a-x7k2p" {
				t.Errorf("holder %+v", h)
			}
			if l.ActiveJob != "captf-c-stale-gone-refresh-a1-0f0f0f" {
				t.Errorf("active job %q", l.ActiveJob)
			}
			if l.Object.Exists == nil || !*l.Object.Exists {
				t.Errorf("object should exist: %+v", l.Object)
			}
		case ref(object.TerraformMachine, "workstation").Suffix():
			if l.Lock == nil || l.Lock.Who != "root@"+machineHost || l.Holder == nil || l.Holder.Host != machineHost || l.Holder.OwnPod {
				t.Errorf("workstation lock %+v holder %+v", l.Lock, l.Holder)
			}
		case ref(object.TerraformCluster, "live-running").Suffix():
			if l.ActiveJob != "" {
				t.Errorf("a finished Job is not active: %q", l.ActiveJob)
			}
		}
	}
}
