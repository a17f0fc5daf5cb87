package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/captf-io/kubectl-captf/pkg/advice"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/audit"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/inspect/cluster"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/unlock"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// getLease reads a lock Lease as admin.
func getLease(t *testing.T, r object.Ref) *coordinationv1.Lease {
	t.Helper()
	l, err := admin.Kube.CoordinationV1().Leases(r.Namespace).Get(context.Background(), object.LockLeaseName("default", r.Suffix()), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// newObject creates a CAPTF object in a namespace of the test's own.
func newObject(t *testing.T, ns string, k object.Kind, name string) object.Ref {
	t.Helper()
	r := object.Ref{Kind: k, Namespace: ns, Name: name}
	if err := admin.Object(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return r
}

// syntheticLock writes a held lock Lease as the backend does.
func syntheticLock(t *testing.T, r object.Ref, id, who string, info *string) {
	t.Helper()
	if info == nil {
		s := testbed.LockInfo(id, who, t0)
		info = &s
	}
	if _, err := admin.LockLease(context.Background(), r.Namespace, r.Suffix(), testbed.BackendLabels(r, testbed.ObjectCluster), &id, info); err != nil {
		t.Fatal(err)
	}
}

func assertUnchanged(t *testing.T, r object.Ref, before *coordinationv1.Lease) {
	t.Helper()
	if after := getLease(t, r); after.ResourceVersion != before.ResourceVersion {
		t.Errorf("the Lease was written: resourceVersion %s -> %s", before.ResourceVersion, after.ResourceVersion)
	}
}

func assertCleared(t *testing.T, r object.Ref, before *coordinationv1.Lease) {
	t.Helper()
	after := getLease(t, r)
	if after.Spec.HolderIdentity != nil {
		t.Errorf("holderIdentity %q, want null", *after.Spec.HolderIdentity)
	}
	if _, ok := after.Annotations[inspect.AnnotationLock]; ok {
		t.Error("lock-info annotation kept")
	}
	for k, v := range before.Labels {
		if after.Labels[k] != v {
			t.Errorf("label %s changed: %q -> %q", k, v, after.Labels[k])
		}
	}
}

// The whole path of a stale lock left by a SIGKILLed runner: dry run,
// unlock, Event, and a real terraform apply that then takes the lock.
func TestUnlockStaleThenTerraformApplies(t *testing.T) {
	ctx := context.Background()
	r := newObject(t, "unlock-stale", object.TerraformCluster, "demo")
	b := testbed.Backend{Namespace: r.Namespace, Suffix: r.Suffix(), Labels: testbed.BackendLabels(r, testbed.ObjectCluster)}
	dir, err := tf.Init(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	id, err := tf.KilledLock(ctx, admin.Kube, dir, b, "captf-c-demo-apply-a1-d72d2a-x7k2p")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := tf.Run(ctx, dir, "plan", "-no-color", "-lock-timeout=0s"); err == nil || !strings.Contains(out, "Error acquiring the state lock") {
		t.Fatalf("terraform plan should fail on the held lock: %v\n%s", err, out)
	}
	kc := kubeconfigIn(t, r.Namespace)
	before := getLease(t, r)

	dry := captf(t, kc, "unlock", "terraformcluster/demo")
	if dry.code != 0 || !strings.Contains(flat(dry.out), "Verdict: Stale") ||
		!strings.Contains(flat(dry.out), fmt.Sprintf("Would: update Lease unlock-stale/%s at resourceVersion %s: spec.holderIdentity %q -> null, remove annotation app.terraform.io/lock-info", before.Name, before.ResourceVersion, id)) ||
		!strings.Contains(flat(dry.out), "Dry run: nothing was written. To unlock: kubectl captf "+conn(t, "unlock-stale")+" unlock terraformcluster/demo -n unlock-stale --id '"+id+"' --confirm") {
		t.Fatalf("dry run: exit %d\n%s%s", dry.code, dry.out, dry.err)
	}
	assertUnchanged(t, r, before)

	res := captf(t, kc, "unlock", "terraformcluster/demo", "--confirm")
	if res.code != 0 || !strings.Contains(flat(res.out), "Unlocked: update Lease") || !strings.Contains(flat(res.out), "Recorded Event") ||
		!strings.Contains(flat(res.out), "kubectl "+conn(t, "unlock-stale")+" annotate terraformcluster/demo -n unlock-stale 'captf.io/unlocked-at=") {
		t.Fatalf("unlock: exit %d\n%s%s", res.code, res.out, res.err)
	}
	assertCleared(t, r, before)

	// The Event names the lock, the previous holder, the operation and the user.
	evs, err := admin.Kube.EventsV1().Events(r.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil || len(evs.Items) != 1 {
		t.Fatalf("events: %v %v", evs, err)
	}
	ev := evs.Items[0]
	if ev.Reason != audit.Reason || ev.Type != corev1.EventTypeWarning || ev.Regarding.Kind != "TerraformCluster" || ev.Regarding.Name != "demo" || ev.Regarding.UID == "" ||
		!strings.Contains(ev.Note, id) || !strings.Contains(ev.Note, "root@captf-c-demo-apply-a1-d72d2a-x7k2p") ||
		!strings.Contains(ev.Note, "OperationTypeApply") || !strings.Contains(ev.Note, `user "admin"`) {
		t.Errorf("event %+v", ev)
	}

	// Terraform interoperates: the lock is free for a real apply.
	if out, err := tf.Run(ctx, dir, "apply", "-auto-approve", "-input=false", "-no-color", "-lock-timeout=0s"); err != nil {
		t.Fatalf("terraform apply after unlock: %v\n%s", err, out)
	}
	if l := getLease(t, r); l.Spec.HolderIdentity != nil {
		t.Errorf("terraform left the lock held: %v", *l.Spec.HolderIdentity)
	}
	// A second unlock finds it free and writes nothing.
	before = getLease(t, r)
	if res := captf(t, kc, "unlock", "terraformcluster/demo", "--confirm"); res.code != 0 || !strings.Contains(flat(res.out), "already free; nothing was written") {
		t.Errorf("already free: exit %d\n%s", res.code, res.out)
	}
	assertUnchanged(t, r, before)
}

func TestUnlockRefusesLiveHolders(t *testing.T) {
	ctx := context.Background()
	ns := "unlock-live"
	for _, phase := range []string{"Running", "Pending", "terminating"} {
		t.Run(phase, func(t *testing.T) {
			name := strings.ToLower(phase)
			r := newObject(t, ns, object.TerraformMachine, name)
			podName := "captf-m-" + name + "-apply-a1-d72d2a-x7k2p"
			var err error
			if phase == "terminating" {
				err = admin.TerminatingPod(ctx, r, podName)
			} else {
				_, err = admin.RunnerPod(ctx, r, podName, corev1.PodPhase(phase))
			}
			if err != nil {
				t.Fatal(err)
			}
			id := "11111111-2222-3333-4444-555555555555"
			syntheticLock(t, r, id, "root@"+podName, nil)
			before := getLease(t, r)
			kc := kubeconfigIn(t, ns)
			for _, args := range [][]string{{}, {"--confirm"}, {"--confirm", "--id", id}} {
				res := captf(t, kc, append([]string{"unlock", "terraformmachine/" + name}, args...)...)
				if res.code != 3 || !strings.Contains(flat(res.out), "Refused: holder pod "+podName) || !strings.Contains(flat(res.out), "two runs write the same state") {
					t.Errorf("%v: exit %d\n%s%s", args, res.code, res.out, res.err)
				}
			}
			assertUnchanged(t, r, before)
			if phase == "Running" {
				// --force alone names no holder: refused, with the command
				// that names the one seen.
				res := captf(t, kc, "unlock", "terraformmachine/"+name, "--confirm", "--force")
				if res.code != 3 || !strings.Contains(flat(res.out), "--force needs --id") || !strings.Contains(flat(res.out), "--force --id '"+id+"' --confirm") {
					t.Errorf("--force without --id: exit %d\n%s%s", res.code, res.out, res.err)
				}
				assertUnchanged(t, r, before)
				res = captf(t, kc, "unlock", "terraformmachine/"+name, "--confirm", "--force", "--id", id)
				if res.code != 0 || !strings.Contains(flat(res.out), "Unlocked:") {
					t.Errorf("--force: exit %d\n%s%s", res.code, res.out, res.err)
				}
				assertCleared(t, r, before)
			}
		})
	}
}

// A real lock from a workstation: refused without --id and with a wrong
// one, cleared with the right one.
func TestUnlockForeignNeedsTheID(t *testing.T) {
	ctx := context.Background()
	r := newObject(t, "unlock-foreign", object.TerraformMachine, "db")
	id, err := tf.LockAs(ctx, admin.Kube, r, "")
	if err != nil {
		t.Fatal(err)
	}
	kc := kubeconfigIn(t, r.Namespace)
	before := getLease(t, r)
	res := captf(t, kc, "unlock", "terraformmachine/db", "--confirm")
	if res.code != 3 || !strings.Contains(flat(res.out), "A foreign lock may be mid-write") || !strings.Contains(flat(res.out), "kubectl captf "+conn(t, r.Namespace)+" unlock terraformmachine/db -n "+r.Namespace+" --id '"+id+"' --confirm") ||
		!strings.Contains(flat(res.out), `"root@`+machineHostname(t)+`" (apply, for `) {
		t.Errorf("no --id: exit %d\n%s", res.code, res.out)
	}
	res = captf(t, kc, "unlock", "terraformmachine/db", "--confirm", "--id", "00000000-0000-0000-0000-000000000000")
	if res.code != 3 || !strings.Contains(flat(res.out), `is not the current one ("`+id+`"): the lock is now held by "root@`) {
		t.Errorf("wrong --id: exit %d\n%s", res.code, res.out)
	}
	assertUnchanged(t, r, before)
	res = captf(t, kc, "unlock", "terraformmachine/db", "--confirm", "--id", id)
	if res.code != 0 {
		t.Fatalf("right --id: exit %d\n%s%s", res.code, res.out, res.err)
	}
	assertCleared(t, r, before)
}

// Corrupt lock info: terraform force-unlock cannot clear it; unlock can,
// given the ID.
func TestUnlockUnreadableInfoWithID(t *testing.T) {
	r := newObject(t, "unlock-unknown", object.TerraformCluster, "corrupt")
	id, junk := "22222222-3333-4444-5555-666666666666", `{"ID": "22222222-3333-4444-5555-666666666666", "Who": `
	syntheticLock(t, r, id, "", &junk)
	kc := kubeconfigIn(t, r.Namespace)
	before := getLease(t, r)
	if res := captf(t, kc, "unlock", "terraformclusters.infrastructure.cluster.x-k8s.io/corrupt", "--confirm"); res.code != 3 || !strings.Contains(flat(res.out), "the lock is Unknown") {
		t.Errorf("no --id: exit %d\n%s", res.code, res.out)
	}
	assertUnchanged(t, r, before)
	res := captf(t, kc, "unlock", "terraformcluster", "corrupt", "--confirm", "--id", id, "-o", "json")
	var out v1alpha1.UnlockResult
	if err := json.Unmarshal([]byte(res.out), &out); err != nil || res.code != 0 || out.Action != v1alpha1.ActionUnlocked ||
		out.Change == nil || out.Change.ResourceVersion != before.ResourceVersion || out.Verdict != v1alpha1.Unknown || out.Kind != "UnlockResult" {
		t.Fatalf("exit %d %v: %s%s", res.code, err, res.out, res.err)
	}
	assertCleared(t, r, before)
}

// A lock whose object is gone is named through its Lease.
func TestUnlockByLeaseName(t *testing.T) {
	r := object.Ref{Kind: object.TerraformCluster, Namespace: "unlock-lease", Name: "gone"}
	if err := admin.Namespace(context.Background(), r.Namespace); err != nil {
		t.Fatal(err)
	}
	syntheticLock(t, r, "33333333-4444-5555-6666-777777777777", "root@captf-c-gone-apply-a1-d72d2a-x7k2p", nil)
	kc := kubeconfigIn(t, r.Namespace)
	before := getLease(t, r)
	lease := "lease/" + before.Name
	res := captf(t, kc, "unlock", lease, "--confirm", "--reconcile")
	// Its namespace holds no CAPTF object: CAPTF's orphan sweep may
	// delete the Lease, so no Job is all the reason says will not come.
	if res.code != 0 || !strings.Contains(flat(res.out), "no longer exists, so no Job will clear it") || !strings.Contains(flat(res.out), "(OrphanSweep)") {
		t.Fatalf("exit %d\n%s%s", res.code, res.out, res.err)
	}
	if !strings.Contains(res.err, "Warning: --reconcile: no existing CAPTF object to annotate") {
		t.Errorf("stderr %q", res.err)
	}
	assertCleared(t, r, before)
	evs, _ := admin.Kube.EventsV1().Events(r.Namespace).List(context.Background(), metav1.ListOptions{})
	if len(evs.Items) != 1 || evs.Items[0].Regarding.Kind != "Lease" || evs.Items[0].Regarding.Name != before.Name {
		t.Errorf("events %+v", evs.Items)
	}
	// Argument errors: one line, exit 1.
	for _, args := range [][]string{
		{"unlock", "terraformcluster/missing"},
		{"unlock", "lease/captf-run-x"},
		{"unlock", "nosuchkind/x"},
		{"unlock", "configmap/x"},
		{"unlock"},
		{"unlock", "terraformcluster/x", "--all-stale"},
	} {
		res := captf(t, kc, args...)
		if res.code != 1 || !strings.HasPrefix(res.err, "error: ") || strings.Count(res.err, "\n") != 1 {
			t.Errorf("%v: exit %d, %q", args, res.code, res.err)
		}
	}
}

func TestUnlockReconcile(t *testing.T) {
	r := newObject(t, "unlock-reconcile", object.TerraformCluster, "demo")
	syntheticLock(t, r, "44444444-5555-6666-7777-888888888888", "root@captf-c-demo-apply-a1-d72d2a-x7k2p", nil)
	res := captf(t, kubeconfigIn(t, r.Namespace), "unlock", "terraformcluster/demo", "--confirm", "--reconcile")
	if res.code != 0 || !strings.Contains(flat(res.out), "Annotated terraformcluster/demo with captf.io/unlocked-at=") {
		t.Fatalf("exit %d\n%s%s", res.code, res.out, res.err)
	}
	u, err := admin.Dynamic.Resource(r.Kind.GVR()).Namespace(r.Namespace).Get(context.Background(), "demo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	at, err := time.Parse(time.RFC3339, u.GetAnnotations()[advice.ReconcileAnnotation])
	if err != nil || time.Since(at) > time.Minute {
		t.Errorf("annotation %q: %v", u.GetAnnotations()[advice.ReconcileAnnotation], err)
	}
}

// The real server rejects the write when another writer changed the Lease
// after the check: the new lock stays.
func TestUnlockRaceConflict(t *testing.T) {
	ctx := context.Background()
	r := newObject(t, "unlock-race", object.TerraformCluster, "demo")
	syntheticLock(t, r, "55555555-6666-7777-8888-999999999999", "root@captf-c-demo-apply-a1-d72d2a-x7k2p", nil)
	newID := "66666666-7777-8888-9999-000000000000"
	newInfo := testbed.LockInfo(newID, "root@captf-c-demo-apply-a2-aaaaaa-q1w2e", time.Now())
	cs, err := bed.Clients()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", bed.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	reader, err := cluster.ForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := &unlock.Unlocker{
		Reader: reader,
		Client: cs.Kube, Dynamic: cs.Dynamic,
		BeforeWrite: func(ctx context.Context) error {
			// A new runner takes the lock between the check and the write.
			l := getLease(t, r)
			l.Spec.HolderIdentity = &newID
			l.Annotations[inspect.AnnotationLock] = newInfo
			_, err := cs.Kube.CoordinationV1().Leases(r.Namespace).Update(ctx, l, metav1.UpdateOptions{})
			return err
		},
	}
	out, err := u.Unlock(ctx, r.Namespace, object.LockLeaseName("default", r.Suffix()), unlock.Options{Confirm: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.Action != v1alpha1.Conflict {
		t.Fatalf("action %s: %s", out.Action, out.Message)
	}
	l := getLease(t, r)
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != newID || l.Annotations[inspect.AnnotationLock] != newInfo {
		t.Errorf("the new lock was not kept intact: %v", l.Spec.HolderIdentity)
	}
}

func TestUnlockAllStale(t *testing.T) {
	ctx := context.Background()
	ns := "unlock-all"
	mk := func(name, who string) object.Ref {
		r := newObject(t, ns, object.TerraformCluster, name)
		syntheticLock(t, r, "77777777-8888-9999-aaaa-bbbbbbbbbbbb", who, nil)
		return r
	}
	stale1 := mk("s1", "root@captf-c-s1-apply-a1-d72d2a-x7k2p")
	stale2 := mk("s2", "root@captf-c-s2-destroy-a4-d72d2a-x7k2p")
	if _, err := admin.RunnerPod(ctx, stale2, "captf-c-s2-destroy-a4-d72d2a-x7k2p", corev1.PodFailed); err != nil {
		t.Fatal(err)
	}
	live := mk("live", "root@captf-c-live-apply-a1-d72d2a-x7k2p")
	if _, err := admin.RunnerPod(ctx, live, "captf-c-live-apply-a1-d72d2a-x7k2p", corev1.PodRunning); err != nil {
		t.Fatal(err)
	}
	foreign := mk("foreign", "alice@laptop")
	unknown := mk("unknown", "no-at-sign")
	kc := kubeconfigIn(t, ns)
	keep := map[object.Ref]*coordinationv1.Lease{}
	for _, r := range []object.Ref{live, foreign, unknown} {
		keep[r] = getLease(t, r)
	}
	b1, b2 := getLease(t, stale1), getLease(t, stale2)

	dry := captf(t, kc, "unlock", "--all-stale")
	if dry.code != 0 || !strings.Contains(flat(dry.out), "2 stale locks: would unlock 2.") {
		t.Fatalf("dry run: exit %d\n%s%s", dry.code, dry.out, dry.err)
	}
	assertUnchanged(t, stale1, b1)
	res := captf(t, kc, "unlock", "--all-stale", "--confirm", "-o", "name")
	if res.code != 0 || strings.Count(res.out, "\n") != 2 || !strings.Contains(flat(res.out), "lease.coordination.k8s.io/"+b1.Name) || !strings.Contains(flat(res.out), "lease.coordination.k8s.io/"+b2.Name) {
		t.Fatalf("exit %d\n%s%s", res.code, res.out, res.err)
	}
	assertCleared(t, stale1, b1)
	assertCleared(t, stale2, b2)
	for r, before := range keep {
		assertUnchanged(t, r, before)
	}
	if res := captf(t, kc, "unlock", "--all-stale", "--confirm"); res.code != 0 || res.err != "No stale locks found in unlock-all namespace.\n" {
		t.Errorf("nothing left: exit %d %q", res.code, res.err)
	}
}

// Without update on leases, a one-line error names the permission.
func TestUnlockRBAC(t *testing.T) {
	r := newObject(t, "unlock-rbac", object.TerraformCluster, "demo")
	syntheticLock(t, r, "88888888-9999-aaaa-bbbb-cccccccccccc", "root@captf-c-demo-apply-a1-d72d2a-x7k2p", nil)
	grant(t, r.Namespace, testbed.Viewer,
		read("coordination.k8s.io", "leases"), read("", "pods"), read("batch", "jobs"),
		read(object.Group, "terraformclusters", "terraformmachines", "terraformmachinepools"))
	before := getLease(t, r)
	kc, err := bed.KubeconfigFor(testbed.Viewer, r.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	res := captf(t, kc, "unlock", "terraformcluster/demo", "--confirm")
	if res.code != 1 || strings.Count(res.err, "\n") != 1 ||
		!strings.HasPrefix(res.err, `error: cannot update leases in namespace "unlock-rbac" (unlocking needs update on leases)`) ||
		!strings.Contains(res.err, `User "viewer" cannot update resource "leases"`) {
		t.Errorf("exit %d, %q", res.code, res.err)
	}
	assertUnchanged(t, r, before)
	// The dry run needs no write permission.
	if res := captf(t, kc, "unlock", "terraformcluster/demo"); res.code != 0 {
		t.Errorf("dry run: exit %d %s", res.code, res.err)
	}
}
