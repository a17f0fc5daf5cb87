package e2e

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// rolesFromDoc reads the ClusterRoles of docs/rbac.md, as a user copies them.
func rolesFromDoc(t *testing.T) map[string]*rbacv1.ClusterRole {
	t.Helper()
	doc, err := os.ReadFile("../../docs/rbac.md")
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]*rbacv1.ClusterRole{}
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		var r rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict([]byte(m[1]), &r); err != nil {
			t.Fatalf("docs/rbac.md: %v\n%s", err, m[1])
		}
		roles[r.Name] = &r
	}
	return roles
}

func bindClusterRole(t *testing.T, ns, user, role string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role + "-" + user},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
	}
	if _, err := admin.Kube.RbacV1().RoleBindings(ns).Create(context.Background(), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// The documented roles are enough, and the read-only one is read only.
func TestDocumentedRBAC(t *testing.T) {
	ctx := context.Background()
	roles := rolesFromDoc(t)
	for _, name := range []string{"captf-locks-viewer", "captf-locks-unlocker", "captf-state-secret-names"} {
		r, ok := roles[name]
		if !ok {
			t.Fatalf("docs/rbac.md has no ClusterRole %s", name)
		}
		if _, err := admin.Kube.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ns, user := "rbac-doc", testbed.Nobody
	r := newObject(t, ns, object.TerraformCluster, "demo")
	if _, err := admin.RunnerPod(ctx, r, "captf-c-demo-apply-a1-d72d2a-x7k2p", corev1.PodFailed); err != nil {
		t.Fatal(err)
	}
	syntheticLock(t, r, "99999999-aaaa-bbbb-cccc-dddddddddddd", "root@captf-c-demo-apply-a1-d72d2a-x7k2p", nil)
	// A machine that inherits drift 0 from its TerraformCluster, found
	// through its CAPI Cluster: the viewer reads both, without a warning.
	prod := object.Ref{Kind: object.TerraformCluster, Namespace: ns, Name: "prod"}
	if err := admin.Seed(ctx, prod, testbed.Seeded{Spec: map[string]any{"defaults": map[string]any{"drift": map[string]any{"intervalSeconds": int64(0)}}}}); err != nil {
		t.Fatal(err)
	}
	if err := admin.CAPICluster(ctx, ns, "prod", "prod"); err != nil {
		t.Fatal(err)
	}
	web := object.Ref{Kind: object.TerraformMachine, Namespace: ns, Name: "web"}
	if err := admin.Seed(ctx, web, testbed.Seeded{Labels: map[string]string{testbed.ClusterNameLabel: "prod"}, Status: map[string]any{"initialization": map[string]any{"provisioned": true}}}); err != nil {
		t.Fatal(err)
	}
	syntheticLock(t, web, "99999999-aaaa-bbbb-cccc-eeeeeeeeeeee", "root@captf-m-web-apply-a1-d72d2a-x7k2p", nil)
	// A deleting object: whether its state exists needs Secrets' metadata.
	gone := object.Ref{Kind: object.TerraformCluster, Namespace: ns, Name: "gone"}
	if err := admin.Seed(ctx, gone, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Destroy"}, Delete: []string{}}); err != nil {
		t.Fatal(err)
	}
	syntheticLock(t, gone, "99999999-aaaa-bbbb-cccc-ffffffffffff", "root@captf-c-gone-apply-a1-d72d2a-x7k2p", nil)
	// A live object whose state CAPTF read: its decision lists its state
	// Secrets' metadata, which the viewer may not.
	live := object.Ref{Kind: object.TerraformCluster, Namespace: ns, Name: "live"}
	seed19(t, live, testbed.Seeded{Status: status19(cond19("StateReadable", "True", "StateRead")), World: &testbed.World{}})
	syntheticLock(t, live, "99999999-aaaa-bbbb-cccc-111111111111", "root@captf-c-live-apply-a1-d72d2a-x7k2p", nil)
	const followsCondition = "the verdict follows the object's StateReadable condition alone"
	reasonOf := func(kc string, obj object.Ref) string {
		for _, l := range locksJSON(t, kc).Items {
			if l.Object != nil && l.Object.Name == obj.Name && l.Object.Kind == obj.Kind.Name {
				return l.Reason
			}
		}
		return ""
	}
	bindClusterRole(t, ns, user, "captf-locks-viewer")
	kc, err := bed.KubeconfigFor(user, ns)
	if err != nil {
		t.Fatal(err)
	}
	before := getLease(t, r)

	if res := captf(t, kc, "locks", "-o", "wide"); res.code != 0 || res.err != "" || !regexp.MustCompile(`terraformcluster/demo +Stale`).MatchString(res.out) {
		t.Errorf("locks as viewer: exit %d %q\n%s", res.code, res.err, res.out)
	}
	if why := reasonOf(kc, web); !strings.Contains(why, "no Job is due") || !strings.Contains(why, "terraformcluster/prod spec.defaults.drift.intervalSeconds") {
		t.Errorf("as viewer, the machine's inherited drift: %q", why)
	}
	if why := reasonOf(kc, gone); !strings.Contains(why, "whether its state Secret exists could not be read (its Secrets' metadata could not be listed: Forbidden)") {
		t.Errorf("as viewer, the deleting object's state: %q", why)
	}
	res := captf(t, kc, "explain", "terraformcluster/demo")
	if res.code != 0 || !strings.Contains(flat(res.out), "Verdict: Stale") || !strings.Contains(flat(res.out), "Unreadable: state Secrets:") {
		t.Errorf("explain as viewer: exit %d %q\n%s", res.code, res.err, res.out)
	}
	// Once, in explain's output (locks says nothing: no warning above).
	if res := captf(t, kc, "explain", "terraformcluster/live"); res.code != 0 || strings.Count(flat(res.out), followsCondition) != 1 || !strings.Contains(flat(res.out), "Unreadable: state Secrets: its Secrets' metadata could not be listed: Forbidden") {
		t.Errorf("explain as viewer of a live object whose state Secrets it cannot list: exit %d %q\n%s", res.code, res.err, res.out)
	}
	if res := captf(t, kc, "unlock", "terraformcluster/demo", "--confirm"); res.code != 1 || !strings.Contains(res.err, "unlocking needs update on leases") {
		t.Errorf("unlock as viewer: exit %d %q", res.code, res.err)
	}
	assertUnchanged(t, r, before)

	bindClusterRole(t, ns, user, "captf-state-secret-names")
	for _, obj := range []string{"terraformcluster/demo", "terraformcluster/live"} {
		if res := captf(t, kc, "explain", obj); res.code != 0 || strings.Contains(res.out, "Unreadable") {
			t.Errorf("explain %s with secret names: %s", obj, res.out)
		}
	}
	if why := reasonOf(kc, gone); !strings.Contains(why, "it has no state Secret") {
		t.Errorf("with secret names, the deleting object's state: %q", why)
	}
	bindClusterRole(t, ns, user, "captf-locks-unlocker")
	res = captf(t, kc, "unlock", "terraformcluster/demo", "--confirm", "--reconcile")
	if res.code != 0 || res.err != "" || !strings.Contains(res.out, "Recorded Event") || !strings.Contains(res.out, "Annotated terraformcluster/demo") {
		t.Errorf("unlock as unlocker: exit %d %q\n%s", res.code, res.err, res.out)
	}
	assertCleared(t, r, before)
}
