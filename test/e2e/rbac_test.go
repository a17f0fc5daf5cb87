package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// grant binds a Role in the namespace to a user.
func grant(t *testing.T, ns, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	grantTo(t, ns, rbacv1.Subject{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}, rules...)
}

// grantTo binds a Role in the namespace to a user or a group.
func grantTo(t *testing.T, ns string, subject rbacv1.Subject, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	name := "captf-e2e-" + subject.Name
	_ = admin.Kube.RbacV1().RoleBindings(ns).Delete(ctx, name, metav1.DeleteOptions{})
	_ = admin.Kube.RbacV1().Roles(ns).Delete(ctx, name, metav1.DeleteOptions{})
	if _, err := admin.Kube.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{subject},
	}
	if _, err := admin.Kube.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func read(group string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: []string{"get", "list"}}
}

func userConfig(t *testing.T, user string) string {
	t.Helper()
	kc, err := bed.KubeconfigFor(user, verdictsNS)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// Leases and pods readable, CAPTF's objects and Jobs not: the verdicts
// still come, with a one-line warning for each unreadable kind.
func TestRBACDegrades(t *testing.T) {
	seedVerdicts(t)
	grant(t, verdictsNS, testbed.Viewer, read("coordination.k8s.io", "leases"), read("", "pods"))
	res := captf(t, userConfig(t, testbed.Viewer), "locks", "-o", "json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.err)
	}
	warnings := strings.Split(strings.TrimSpace(res.err), "\n")
	if len(warnings) != 4 {
		t.Fatalf("want 4 warning lines (3 kinds, jobs), got:\n%s", res.err)
	}
	for _, w := range warnings {
		if !strings.HasPrefix(w, "Warning: cannot list ") || !strings.Contains(w, `in namespace "verdicts"`) || !strings.Contains(w, "forbidden") {
			t.Errorf("warning %q", w)
		}
	}
	list := locksJSONFrom(t, res.out)
	for _, l := range list.Items {
		if l.Name == object.LockLeaseName("default", ref(object.TerraformCluster, "stale-gone").Suffix()) {
			// The pod name still names the object, but whether it exists,
			// and so whether CAPTF clears the lock, is unknown.
			if l.Verdict != v1alpha1.Stale || l.CAPTFClears || l.Object == nil || l.Object.Exists != nil || !strings.Contains(l.Reason, "could not be read") {
				t.Errorf("stale lock read without object rights: %+v %q", l.Object, l.Reason)
			}
			if strings.Join(l.Unreadable, ",") != "terraformclusters,jobs" {
				t.Errorf("unreadable %v", l.Unreadable)
			}
		}
	}
	table := captf(t, userConfig(t, testbed.Viewer), "locks", "-o", "wide")
	if got := rowOf(t, table.out, "terraformcluster/stale-gone"); got[9] != "<unreadable>" || got[10] != "pod gone; Job captf-c-stale-gone-apply-a1-d72d2a could not be read" {
		t.Errorf("ACTIVE JOB %q, RUNNER END %q (after CLUSTER)", got[9], got[10])
	}
}

// Without pods no verdict can be given: a one-line error naming them.
func TestRBACNoPodsIsAnError(t *testing.T) {
	seedVerdicts(t)
	grant(t, verdictsNS, testbed.Nobody, read("coordination.k8s.io", "leases"))
	res := captf(t, userConfig(t, testbed.Nobody), "locks")
	if res.code != 1 || strings.Count(res.err, "\n") != 1 || res.out != "" ||
		!strings.HasPrefix(res.err, `error: cannot list pods in namespace "verdicts" (the plugin needs list on pods)`) ||
		!strings.Contains(res.err, `User "nobody" cannot list resource "pods"`) {
		t.Errorf("exit %d, out %q, err %q", res.code, res.out, res.err)
	}
	// And without leases, the first read names them.
	grant(t, verdictsNS, testbed.Nobody)
	res = captf(t, userConfig(t, testbed.Nobody), "locks")
	if res.code != 1 || !strings.HasPrefix(res.err, `error: cannot list leases in namespace "verdicts" (the plugin needs list on leases)`) {
		t.Errorf("exit %d, err %q", res.code, res.err)
	}
}

// Without Cluster API's Clusters, the TerraformCluster a machine inherits
// from cannot be found as CAPTF finds it: one warning, and the machine's
// stale lock says "if a Job starts", never "clears".
func TestRBACClustersUnreadable(t *testing.T) {
	ctx := context.Background()
	ns := "rbac-clusters"
	// A world in which CAPTF starts web's next Job: its Machine owner in
	// Cluster prod, whose infrastructure is TerraformCluster prod.
	prod := object.Ref{Kind: object.TerraformCluster, Namespace: ns, Name: "prod"}
	if err := admin.Seed(ctx, prod, testbed.Seeded{World: &testbed.World{Cluster: "prod"}}); err != nil {
		t.Fatal(err)
	}
	web := object.Ref{Kind: object.TerraformMachine, Namespace: ns, Name: "web"}
	if err := admin.Seed(ctx, web, testbed.Seeded{World: &testbed.World{Cluster: "prod"}}); err != nil {
		t.Fatal(err)
	}
	syntheticLock(t, web, "12121212-0000-0000-0000-000000000000", "root@captf-m-web-apply-a1-d72d2a-x7k2p", nil)
	grant(t, ns, testbed.Viewer, read("coordination.k8s.io", "leases"), read("", "pods"), read("batch", "jobs"),
		read(object.Group, "terraformclusters", "terraformmachines", "terraformmachinepools"))
	kc, err := bed.KubeconfigFor(testbed.Viewer, ns)
	if err != nil {
		t.Fatal(err)
	}
	res := captf(t, kc, "locks", "-o", "json")
	if res.code != 0 || strings.Count(res.err, "\n") != 1 || !strings.Contains(res.err, "cannot get clusters.cluster.x-k8s.io") ||
		!strings.Contains(res.err, "what TerraformMachines and TerraformMachinePools inherit from their TerraformCluster is shown as unknown") {
		t.Fatalf("exit %d, warnings:\n%s", res.code, res.err)
	}
	list := locksJSONFrom(t, res.out)
	if len(list.Items) != 1 {
		t.Fatalf("%d locks", len(list.Items))
	}
	l := list.Items[0]
	if l.Verdict != v1alpha1.Stale || l.CAPTFClears || !strings.Contains(l.Reason, "if a Job starts") || !strings.Contains(l.Reason, "could not be read") {
		t.Errorf("%s clears=%v %q", l.Verdict, l.CAPTFClears, l.Reason)
	}
	// With them, the same lock clears with its next drift Job.
	grant(t, ns, testbed.Viewer, read("coordination.k8s.io", "leases"), read("", "pods"), read("batch", "jobs"),
		read(object.Group, "terraformclusters", "terraformmachines", "terraformmachinepools"), read("cluster.x-k8s.io", "clusters"))
	res = captf(t, kc, "locks", "-o", "json")
	if l := locksJSONFrom(t, res.out).Items[0]; res.err != "" || !l.CAPTFClears {
		t.Errorf("with clusters: %q clears=%v %q", res.err, l.CAPTFClears, l.Reason)
	}
}

// explain and unlock name their target through discovery and a read of
// it: refused, that read is one error line naming what the plugin needs;
// with the server unreachable, one error line too, without the discovery
// client's log of each attempt; and so is locks -w's.
func TestTargetReadErrorsAreOneLine(t *testing.T) {
	seedVerdicts(t)
	grant(t, verdictsNS, testbed.Nobody)
	target := "lease/" + object.LockLeaseName("default", ref(object.TerraformCluster, "stale-gone").Suffix())
	down := filepath.Join(t.TempDir(), "down")
	if err := os.WriteFile(down, []byte(`apiVersion: v1
kind: Config
clusters: [{name: down, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: down, context: {cluster: down, user: u, namespace: `+verdictsNS+`}}]
current-context: down
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"explain", "unlock"} {
		res := captf(t, userConfig(t, testbed.Nobody), cmd, target)
		want := `error: cannot get leases.coordination.k8s.io "` + strings.TrimPrefix(target, "lease/") + `" in namespace "` + verdictsNS + `" (the plugin needs get on leases.coordination.k8s.io): `
		if res.code != 1 || res.out != "" || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, want) || !strings.Contains(res.err, `User "nobody" cannot get resource "leases"`) {
			t.Errorf("%s refused: exit %d, out %q, err %q; want one line starting %q", cmd, res.code, res.out, res.err, want)
		}
		res = captf(t, down, cmd, target, "--cache-dir", t.TempDir())
		if res.code != 1 || res.out != "" || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, "error: ") || !strings.Contains(res.err, "connection refused") {
			t.Errorf("%s unreachable: exit %d, out %q, err %q; want one error line", cmd, res.code, res.out, res.err)
		}
	}
	// locks -w starts its informers at once: the first list to fail
	// (the Leases' or the pods', whichever comes first) ends the watch,
	// as client-go's streaming start (WatchListClient, on by default
	// from v0.35) would not; it retried forever, silent.
	res := captf(t, down, "locks", "-w", "--cache-dir", t.TempDir())
	if res.code != 1 || res.out != "" || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, "error: cannot list ") || !strings.Contains(res.err, "connection refused") {
		t.Errorf("locks -w unreachable: exit %d, out %q, err %q; want one error line", res.code, res.out, res.err)
	}
}

// Review26g F9: deletionPolicy Retain deletes the lock Lease, unless
// CAPTF's read finds a Secret of the object's that an earlier object
// retained (checkRetained, before the policy's action), which makes it a
// release that leaves the Lease. Without the right to list Secrets the
// plugin cannot check that: the deletion is not certain, and says why;
// with it, certain.
func TestRBACRetainWithoutSecretsIsUncertain(t *testing.T) {
	r := object.Ref{Kind: object.TerraformCluster, Namespace: "rbac-retain", Name: "keep"}
	kc, withSecrets := viewerOfOneLock(t, r, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Retain"}, Delete: []string{}, World: &testbed.World{}})
	d := oneLock(t, kc).CAPTFDeletesLease
	if d == nil || d.Path != "Retain" || d.Certain || !strings.Contains(d.When, "unless CAPTF's read finds a Secret of the object's retained by an earlier object") ||
		!strings.Contains(d.When, "which the plugin could not check (its state Secrets: ") {
		t.Errorf("without Secrets: %+v", d)
	}
	withSecrets()
	if d := oneLock(t, kc).CAPTFDeletesLease; d == nil || d.Path != "Retain" || !d.Certain || strings.Contains(d.When, "could not check") {
		t.Errorf("with Secrets listed: %+v", d)
	}
}

// Review26g F10: without the right to list Secrets (the read-only role
// does not grant it), a lock CAPTF's StateReadable True says its next Job
// clears is still said to clear, but names "secrets" as unreadable and
// says that it rests on StateReadable, which does not see what stops the
// runtime's init (review26h m5); with it, neither.
func TestRBACWithoutSecretsAClearIsUnchecked(t *testing.T) {
	r := object.Ref{Kind: object.TerraformCluster, Namespace: "rbac-clears", Name: "web"}
	kc, withSecrets := viewerOfOneLock(t, r, testbed.Seeded{Status: map[string]any{"conditions": []any{testbed.Condition("StateReadable", "True", "StateRead", "read", t0)}}, World: &testbed.World{}})
	l := oneLock(t, kc)
	if l.Verdict != v1alpha1.Stale || !l.CAPTFClears || !slices.Contains(l.Unreadable, "secrets") ||
		!strings.Contains(l.Reason, "the plugin could not check its state Secrets (its Secrets' metadata could not be listed: Forbidden), so this rests on CAPTF's StateReadable, which does not see what stops the runtime's init") {
		t.Errorf("without Secrets: %s clears=%v unreadable=%v %q", l.Verdict, l.CAPTFClears, l.Unreadable, l.Reason)
	}
	withSecrets()
	if l := oneLock(t, kc); !l.CAPTFClears || slices.Contains(l.Unreadable, "secrets") || strings.Contains(l.Reason, "could not check") {
		t.Errorf("with Secrets listed: clears=%v unreadable=%v %q", l.CAPTFClears, l.Unreadable, l.Reason)
	}
}

// viewerOfOneLock seeds r as s says, with a stale lock of its own runner
// pod, and returns the kubeconfig of a viewer who may read all the plugin
// reads but Secrets, and a func that grants it the list of Secrets too.
func viewerOfOneLock(t *testing.T, r object.Ref, s testbed.Seeded) (kubeconfig string, withSecrets func()) {
	t.Helper()
	if err := admin.Seed(context.Background(), r, s); err != nil {
		t.Fatal(err)
	}
	syntheticLock(t, r, "13131313-0000-0000-0000-000000000000", "root@"+cfJobName(r.Kind.Code, r.Name, "apply", 1, "d72d2a")+"-x7k2p", nil)
	rules := []rbacv1.PolicyRule{read("coordination.k8s.io", "leases"), read("", "pods"), read("batch", "jobs"),
		read(object.Group, "terraformclusters", "terraformmachines", "terraformmachinepools"), read("cluster.x-k8s.io", "clusters")}
	grant(t, r.Namespace, testbed.Viewer, rules...)
	kc, err := bed.KubeconfigFor(testbed.Viewer, r.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	return kc, func() {
		grant(t, r.Namespace, testbed.Viewer, append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}})...)
	}
}

// oneLock is the one lock `locks -o json` lists with kubeconfig.
func oneLock(t *testing.T, kubeconfig string) v1alpha1.Lock {
	t.Helper()
	res := captf(t, kubeconfig, "locks", "-o", "json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.err)
	}
	list := locksJSONFrom(t, res.out)
	if len(list.Items) != 1 {
		t.Fatalf("%d locks, want 1", len(list.Items))
	}
	return list.Items[0]
}
