package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/escape"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// --force clears only the holder the operator saw: it needs the current
// lock ID, and a holder replaced since is refused by name.
func TestUnlockForceNeedsTheCurrentID(t *testing.T) {
	ctx := context.Background()
	ns := "unlock-force-id"
	r := newObject(t, ns, object.TerraformCluster, "demo")
	podA, podB := "captf-c-demo-apply-a1-aaaaaa-x7k2p", "captf-c-demo-apply-a2-bbbbbb-q8w7e"
	idA, idB := "aaaaaaaa-0000-0000-0000-000000000001", "bbbbbbbb-0000-0000-0000-000000000002"
	a, err := admin.RunnerPod(ctx, r, podA, corev1.PodRunning)
	if err != nil {
		t.Fatal(err)
	}
	syntheticLock(t, r, idA, "root@"+podA, nil)
	kc := kubeconfigIn(t, ns)

	// The dry run the operator reads names pod A and its ID.
	res := captf(t, kc, "unlock", "terraformcluster/demo", "--force")
	if res.code != 3 || !strings.Contains(flat(res.out), "kubectl captf "+conn(t, ns)+" unlock terraformcluster/demo -n "+ns+" --force --id '"+idA+"' --confirm") {
		t.Fatalf("--force dry run: exit %d\n%s%s", res.code, res.out, res.err)
	}
	before := getLease(t, r)
	if res := captf(t, kc, "unlock", "terraformcluster/demo", "--force", "--confirm"); res.code != 3 || !strings.Contains(flat(res.out), "--force needs --id") {
		t.Errorf("--force --confirm without --id: exit %d\n%s%s", res.code, res.out, res.err)
	}
	assertUnchanged(t, r, before)

	// Pod A finishes; the next Job's pod B takes the lock and runs.
	if _, err := admin.SetPhase(ctx, a, corev1.PodSucceeded); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RunnerPod(ctx, r, podB, corev1.PodRunning); err != nil {
		t.Fatal(err)
	}
	l := getLease(t, r)
	l.Spec.HolderIdentity = &idB
	l.Annotations["app.terraform.io/lock-info"] = testbed.LockInfo(idB, "root@"+podB, t0)
	if _, err := admin.Kube.CoordinationV1().Leases(ns).Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	before = getLease(t, r)
	res = captf(t, kc, "unlock", "terraformcluster/demo", "--force", "--id", idA, "--confirm")
	if res.code != 3 || !strings.Contains(flat(res.out), "is now held by \"root@"+podB+"\"") {
		t.Errorf("--force with A's ID: exit %d\n%s%s", res.code, res.out, res.err)
	}
	assertUnchanged(t, r, before)

	res = captf(t, kc, "unlock", "terraformcluster/demo", "--force", "--id", idB, "--confirm")
	if res.code != 0 || !strings.Contains(flat(res.out), "Unlocked:") {
		t.Errorf("--force with B's ID: exit %d\n%s%s", res.code, res.out, res.err)
	}
	assertCleared(t, r, before)
}

// staleLocks makes n objects in ns whose locks are held by runner pods
// that are gone, and returns them in the order the plugin lists them.
func staleLocks(t *testing.T, ns string, names ...string) []object.Ref {
	t.Helper()
	var out []object.Ref
	for _, n := range names {
		r := newObject(t, ns, object.TerraformCluster, n)
		syntheticLock(t, r, "cccccccc-0000-0000-0000-00000000000"+string(rune('0'+len(out))), "root@captf-c-"+n+"-apply-a1-d72d2a-x7k2p", nil)
		out = append(out, r)
	}
	return out
}

func unlockList(t *testing.T, out string) *v1alpha1.UnlockResultList {
	t.Helper()
	var l v1alpha1.UnlockResultList
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return &l
}

func actions(l *v1alpha1.UnlockResultList) map[string]v1alpha1.Action {
	out := map[string]v1alpha1.Action{}
	for _, i := range l.Items {
		out[i.Name] = i.Action
	}
	return out
}

// A Lease deleted between the list and its write is AlreadyUnlocked: the
// others are cleared, all three are reported, and the exit code is 0.
func TestUnlockAllStaleLeaseVanishes(t *testing.T) {
	ns := "all-stale-vanish"
	refs := staleLocks(t, ns, "a", "b", "c")
	gone := object.LockLeaseName("default", refs[2].Suffix())
	kc := newProxy(t, ns, func(w http.ResponseWriter, r *http.Request, seen int) bool {
		// Before the first write of any Lease, delete c's.
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/leases/") && seen == 1 {
			_ = admin.Kube.CoordinationV1().Leases(ns).Delete(r.Context(), gone, metav1.DeleteOptions{})
		}
		return false
	})
	res := captf(t, kc, "unlock", "--all-stale", "--confirm", "-o", "json")
	list := unlockList(t, res.out)
	got := actions(list)
	want := map[string]v1alpha1.Action{
		object.LockLeaseName("default", refs[0].Suffix()): v1alpha1.ActionUnlocked,
		object.LockLeaseName("default", refs[1].Suffix()): v1alpha1.ActionUnlocked,
		gone: v1alpha1.AlreadyUnlocked,
	}
	if res.code != 0 || len(got) != 3 {
		t.Fatalf("exit %d, %v\n%s", res.code, got, res.err)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s, want %s", k, got[k], v)
		}
	}
}

// A lock whose pod read fails is Failed; the locks cleared before and
// after it are still reported, and the exit code is 1.
func TestUnlockAllStaleReadFails(t *testing.T) {
	ns := "all-stale-fail"
	refs := staleLocks(t, ns, "a", "b", "c")
	badPod := "captf-c-b-apply-a1-d72d2a-x7k2p"
	kc := newProxy(t, ns, func(w http.ResponseWriter, r *http.Request, seen int) bool {
		// Each run's list reads b's holder pod once (odd reads); its
		// re-read before the write (even reads) fails.
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/pods/"+badPod) && seen%2 == 0 {
			http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected","reason":"InternalError","code":500}`, http.StatusInternalServerError)
			return true
		}
		return false
	})
	for _, format := range []string{"", "json"} {
		args := []string{"unlock", "--all-stale", "--confirm"}
		if format != "" {
			args = append(args, "-o", format)
		}
		res := captf(t, kc, args...)
		if res.code != 1 {
			t.Fatalf("%q: exit %d, want 1\n%s%s", format, res.code, res.out, res.err)
		}
		if format == "" {
			if f := flat(res.out); !strings.Contains(f, "Failed:") || strings.Count(f, "Unlocked: update Lease") != 2 || !strings.Contains(f, "3 stale locks: unlocked 2, failed 1.") {
				t.Errorf("human output:\n%s", res.out)
			}
			// Re-create the two cleared locks for the json run.
			for _, r := range []object.Ref{refs[0], refs[2]} {
				_ = admin.Kube.CoordinationV1().Leases(ns).Delete(context.Background(), object.LockLeaseName("default", r.Suffix()), metav1.DeleteOptions{})
			}
			staleLocksAgain(t, refs[0], refs[2])
			continue
		}
		got := actions(unlockList(t, res.out))
		if got[object.LockLeaseName("default", refs[1].Suffix())] != v1alpha1.Failed || got[object.LockLeaseName("default", refs[0].Suffix())] != v1alpha1.ActionUnlocked || got[object.LockLeaseName("default", refs[2].Suffix())] != v1alpha1.ActionUnlocked {
			t.Errorf("json: %v", got)
		}
	}
}

func staleLocksAgain(t *testing.T, refs ...object.Ref) {
	t.Helper()
	for _, r := range refs {
		syntheticLock(t, r, "dddddddd-0000-0000-0000-000000000000", "root@captf-c-"+r.Name+"-apply-a1-d72d2a-x7k2p", nil)
	}
}

// An object without any lock Lease has nothing to unlock: exit 0.
func TestUnlockNoLease(t *testing.T) {
	ns := "unlock-no-lease"
	newObject(t, ns, object.TerraformCluster, "fresh")
	res := captf(t, kubeconfigIn(t, ns), "unlock", "terraformcluster/fresh", "--confirm")
	if res.code != 0 || !strings.Contains(flat(res.out), "nothing to unlock") {
		t.Errorf("exit %d\n%s%s", res.code, res.out, res.err)
	}
}

// controlBytes are what must never reach a terminal from cluster text.
func assertTerminalSafe(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range out {
		if r != '\n' && escape.Hidden(r) {
			t.Errorf("%s: %U reaches the output:\n%q", what, r, out)
			return
		}
	}
}

// A Lease whose suffix is the hash of a crafted name, held from a "pod"
// carrying that name: the name is no object's, and no byte of it reaches
// the terminal raw.
func TestCraftedNameIsNeverTrusted(t *testing.T) {
	ctx := context.Background()
	ns := "crafted-name"
	evil := object.Ref{Kind: object.TerraformCluster, Namespace: ns, Name: "x\x1b]0;x\x07$(id)"}
	id := "eeeeeeee-0000-0000-0000-000000000000"
	info := testbed.LockInfo(id, "root@captf-c-"+evil.Name+"-apply-a1-d72d2a-x7k2p", t0)
	l, err := admin.LockLease(ctx, ns, evil.Suffix(), nil, &id, &info)
	if err != nil {
		t.Fatal(err)
	}
	kc := kubeconfigIn(t, ns)
	for _, args := range [][]string{
		{"locks"}, {"locks", "-o", "wide"}, {"explain", "lease/" + l.Name}, {"unlock", "lease/" + l.Name}, {"unlock", "lease/" + l.Name, "--confirm"},
	} {
		res := captf(t, kc, args...)
		assertTerminalSafe(t, strings.Join(args, " "), res.out+res.err)
		if strings.Contains(res.out, "terraformcluster/x") {
			t.Errorf("%v: the crafted name is shown as an object:\n%s", args, res.out)
		}
	}
	if locks := locksJSON(t, kc); len(locks.Items) != 1 || locks.Items[0].Object != nil || locks.Items[0].Verdict != v1alpha1.Foreign || !strings.Contains(locks.Items[0].Reason, "not a valid Kubernetes object name") {
		t.Errorf("%+v", locks.Items)
	}
}

// commands are the pasteable commands of human output: lines starting
// with "kubectl" after their indent, joined with their "\" continuations.
func commands(out string) []string {
	var cmds []string
	lines := strings.Split(out, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "kubectl ") {
			continue
		}
		c := l
		for strings.HasSuffix(c, " \\") && i+1 < len(lines) {
			i++
			c += "\n" + lines[i]
		}
		cmds = append(cmds, c)
	}
	return cmds
}
