package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// kubeconfigContext is one context of a kubeconfig a test writes, with a
// cluster and a user of its own, named after it.
type kubeconfigContext struct {
	name, server, ca, token, namespace string
}

// writeKubeconfig writes a kubeconfig of these contexts, the first current.
func writeKubeconfig(t *testing.T, contexts ...kubeconfigContext) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	for _, c := range contexts {
		cfg.Clusters[c.name] = &clientcmdapi.Cluster{Server: c.server, CertificateAuthority: c.ca}
		cfg.AuthInfos[c.name] = &clientcmdapi.AuthInfo{Token: c.token}
		cfg.Contexts[c.name] = &clientcmdapi.Context{Cluster: c.name, AuthInfo: c.name, Namespace: c.namespace}
	}
	cfg.CurrentContext = contexts[0].name
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// adminContext is a context of the test-bed as its admin, in namespace ns.
func adminContext(name, ns string) kubeconfigContext {
	return kubeconfigContext{name, bed.Server, bed.CAFile, testbed.Token(testbed.AdminUser), ns}
}

// scanPaths are the two ways to read contexts a and b: one with --context
// (path one), both with --contexts or --all-contexts.
var scanPaths = [][]string{{"--context", "a"}, {"--contexts", "a,b"}, {"--all-contexts"}}

// scanned are the contexts a path reads: "" for --context, whose table
// has no CONTEXT column.
func scanned(path []string) []string {
	if path[0] == "--context" {
		return []string{""}
	}
	return []string{"a", "b"}
}

// readsLock runs locks on a path with flags and checks that every context
// read lists obj as Stale.
func readsLock(t *testing.T, kc string, path []string, obj string, flags ...string) {
	t.Helper()
	args := append(append([]string{"locks"}, path...), flags...)
	res := captf(t, kc, args...)
	if res.code != 0 {
		t.Errorf("%v: exit %d, want 0\n%s%s", args, res.code, res.out, res.err)
		return
	}
	for _, ctx := range scanned(path) {
		row := `(?m)^terraformcluster/` + obj + ` +Stale`
		if ctx != "" {
			row = `(?m)^` + ctx + ` +terraformcluster/` + obj + ` +Stale`
		}
		if !regexp.MustCompile(row).MatchString(res.out) {
			t.Errorf("%v: no row %q in\n%s", args, row, res.out)
		}
	}
}

// refusedBy runs locks on a path with flags and checks that every context
// read failed with want: the one error of --context, or a warning for each
// context and, none read, the command's error.
func refusedBy(t *testing.T, kc string, path []string, want string, flags ...string) {
	t.Helper()
	args := append(append([]string{"locks"}, path...), flags...)
	res := captf(t, kc, args...)
	lines := strings.Split(strings.TrimSpace(res.err), "\n")
	if res.code != 1 || res.out != "" {
		t.Errorf("%v: exit %d, want 1 and no output\n%s%s", args, res.code, res.out, res.err)
		return
	}
	if path[0] == "--context" {
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") || !strings.Contains(lines[0], want) {
			t.Errorf("%v: stderr %q, want one error with %q", args, res.err, want)
		}
		return
	}
	if len(lines) != 3 || lines[2] != "error: none of the 2 contexts could be read" {
		t.Errorf("%v: stderr %q, want a warning for each context and the error", args, res.err)
		return
	}
	for i, ctx := range scanned(path) {
		if !strings.HasPrefix(lines[i], "Warning: context "+ctx+": ") || !strings.Contains(lines[i], want) {
			t.Errorf("%v: %q, want context %s's warning with %q", args, lines[i], ctx, want)
		}
	}
}

// --contexts and --all-contexts read each context as --context does, with
// every connection flag of the command line: a user impersonated to scope
// a check is that user in every cluster, never the kubeconfig's admin.
func TestContextsCarryTheConnectionFlags(t *testing.T) {
	ns, other := "contexts-flags", "contexts-flags-n"
	staleLocks(t, ns, "same")
	staleLocks(t, other, "elsewhere")
	kc := writeKubeconfig(t, adminContext("a", ns), adminContext("b", ns))
	for _, path := range scanPaths {
		readsLock(t, kc, path, "same")
		// --as: a user without rights is refused in every cluster.
		refusedBy(t, kc, path, `User "nobody" cannot list resource "leases"`, "--as", testbed.Nobody)
		// -n: every context reads that namespace.
		readsLock(t, kc, path, "elsewhere", "-n", other)
		// --as-uid and --as-group need --as: client-go refuses them alone,
		// before any request, in every context.
		refusedBy(t, kc, path, "without impersonating a user", "--as-uid", "u-1")
		refusedBy(t, kc, path, "without impersonating a user", "--as-group", "g")
	}
	// The request counter counts every context's requests.
	_, one := countedCaptf(t, kc, "locks", "--context", "a")
	if _, both := countedCaptf(t, kc, "locks", "--contexts", "a,b"); one == 0 || both != 2*one {
		t.Errorf("requests counted: %d for --context a, %d for --contexts a,b", one, both)
	}
	// --as-group: the group's rights are the impersonated user's.
	user, group := "captf-e2e-contexts", "captf-e2e-contexts-readers"
	rules := []rbacv1.PolicyRule{read("coordination.k8s.io", "leases"), read("", "pods"), read("batch", "jobs"),
		read(object.Group, "terraformclusters", "terraformmachines", "terraformmachinepools"), read("cluster.x-k8s.io", "clusters")}
	grantTo(t, ns, rbacv1.Subject{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: group}, rules...)
	for _, path := range scanPaths {
		refusedBy(t, kc, path, `User "`+user+`" cannot list resource "leases"`, "--as", user)
		readsLock(t, kc, path, "same", "--as", user, "--as-group", group)
	}

	// --insecure-skip-tls-verify: contexts whose clusters have no CA.
	noCA := func(name string) kubeconfigContext {
		c := adminContext(name, ns)
		c.ca = ""
		return c
	}
	kcNoCA := writeKubeconfig(t, noCA("a"), noCA("b"))
	for _, path := range scanPaths {
		refusedBy(t, kcNoCA, path, "x509: certificate signed by unknown authority")
		readsLock(t, kcNoCA, path, "same", "--insecure-skip-tls-verify")
	}

	// --request-timeout: a server that never answers ends each request
	// at the timeout given, which client-go also asks of the server
	// (?timeout=), not at --context-timeout. (Which of client-go's two
	// deadlines of 2 s reports first varies, so the error's tail does.)
	hanging, _ := hangingServer(t)
	cfg, err := clientcmd.LoadFromFile(hanging)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts["a"], cfg.Contexts["b"] = cfg.Contexts["x"], cfg.Contexts["x"]
	if err := clientcmd.WriteToFile(*cfg, hanging); err != nil {
		t.Fatal(err)
	}
	for _, path := range scanPaths[:2] {
		refusedBy(t, hanging, path, `leases?timeout=2s": `, "--request-timeout", "2s", "--context-timeout", "20s")
	}
}

// The flags that name one cluster or one credential are refused with
// several contexts, before any request; with --contexts of one name they
// apply, as with --context.
func TestContextsRefuseOneClusterFlags(t *testing.T) {
	ns := "contexts-flags"
	kc := writeKubeconfig(t, adminContext("a", ns), adminContext("b", ns))
	for flag, value := range map[string]string{
		"server": "https://127.0.0.1:1", "cluster": "a", "user": "a", "token": "wrong-token",
		"client-certificate": "/nonexistent/c.crt", "client-key": "/nonexistent/c.key",
		"certificate-authority": "/nonexistent/ca.crt", "tls-server-name": "elsewhere.example",
	} {
		for _, scan := range [][]string{{"--all-contexts"}, {"--contexts", "a,b"}} {
			args := append(append([]string{"locks"}, scan...), "--"+flag, value)
			res := captf(t, kc, args...)
			if res.code != 1 || res.out != "" || strings.Count(res.err, "\n") != 1 ||
				!strings.HasPrefix(res.err, "error: --"+flag+" cannot be used with "+scan[0]) || !strings.Contains(res.err, "it names one cluster") {
				t.Errorf("%v: exit %d, stdout %q, stderr %q", args, res.code, res.out, res.err)
			}
		}
	}
	// One context: they apply, as with --context.
	for _, path := range [][]string{{"--context", "a"}, {"--contexts", "a"}} {
		res := captf(t, kc, append([]string{"locks", "--token", "wrong-token"}, path...)...)
		if res.code != 1 || !strings.Contains(res.err, "Unauthorized") {
			t.Errorf("%v --token wrong-token: exit %d\n%s%s", path, res.code, res.out, res.err)
		}
		res = captf(t, kc, append([]string{"locks", "--server", "https://127.0.0.1:1"}, path...)...)
		if res.code != 1 || !strings.Contains(res.err, "127.0.0.1:1") {
			t.Errorf("%v --server https://127.0.0.1:1: exit %d\n%s%s", path, res.code, res.out, res.err)
		}
	}
	if res := captf(t, kc, "locks", "--context", "a", "--contexts", "a"); res.code != 1 || !strings.Contains(res.err, "--context names one cluster") {
		t.Errorf("--context with --contexts: exit %d %q", res.code, res.err)
	}
}

// Two clusters each hold the same object with a Stale lock, so their lock
// Leases have the same name. -o name, whose names do not say their
// cluster, is refused with --contexts and --all-contexts; what can be
// printed leads unlock to the lock listed, and to no other cluster's.
func TestContextsNamesStayInTheirCluster(t *testing.T) {
	ctx := context.Background()
	two, err := testbed.Start(ctx, testbed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(two.Stop)
	admin2, err := two.Clients()
	if err != nil {
		t.Fatal(err)
	}
	ns := "fleet-prod"
	r := staleLocks(t, ns, "same")[0]
	if err := admin2.Object(ctx, r); err != nil {
		t.Fatal(err)
	}
	id, info := "cccccccc-0000-0000-0000-000000000002", testbed.LockInfo("cccccccc-0000-0000-0000-000000000002", "root@captf-c-same-apply-a1-d72d2a-x7k2p", t0)
	if _, err := admin2.LockLease(ctx, ns, r.Suffix(), testbed.OwnerLabels(r), &id, &info); err != nil {
		t.Fatal(err)
	}
	name := object.LockLeaseName("default", r.Suffix())
	lease := func(c *testbed.Clients) (version string, held bool) {
		t.Helper()
		l, err := c.Kube.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l.ResourceVersion, l.Spec.HolderIdentity != nil
	}
	oneBefore, _ := lease(admin)
	kc := writeKubeconfig(t, adminContext("one", ns),
		kubeconfigContext{"two", two.Server, two.CAFile, testbed.Token(testbed.AdminUser), ns})

	var jsonpath string
	for _, scan := range [][]string{{"--contexts", "two"}, {"--contexts", "one,two"}, {"--all-contexts"}} {
		args := append([]string{"locks", "--verdict", "Stale", "-o", "name"}, scan...)
		res := captf(t, kc, args...)
		if res.code != 1 || res.out != "" || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, "error: -o name cannot be used with "+scan[0]) {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, res.code, res.out, res.err)
		}
		m := regexp.MustCompile(`-o jsonpath='([^']+)'`).FindStringSubmatch(res.err)
		if m == nil {
			t.Fatalf("%v: no jsonpath suggested: %q", args, res.err)
		}
		jsonpath = m[1]
	}
	// The jsonpath the error suggests says each lock's cluster: taken
	// from its row, unlock clears cluster two's lock, and not one's.
	res := captf(t, kc, "locks", "--contexts", "one,two", "--verdict", "Stale", "-o", "jsonpath="+jsonpath)
	if want := "one\t" + ns + "\t" + name + "\ntwo\t" + ns + "\t" + name + "\n"; res.code != 0 || res.out != want {
		t.Fatalf("the suggested jsonpath: exit %d %q, want %q\n%s", res.code, res.out, want, res.err)
	}
	row := strings.Split(strings.Split(res.out, "\n")[1], "\t")
	if res := captf(t, kc, "--context", row[0], "unlock", "-n", row[1], "lease/"+row[2], "--confirm"); res.code != 0 {
		t.Fatalf("unlock from cluster two's row: exit %d\n%s%s", res.code, res.out, res.err)
	}
	if _, held := lease(admin2); held {
		t.Error("cluster two's lock is still held")
	}
	if v, held := lease(admin); !held || v != oneBefore {
		t.Errorf("cluster one's lock was written (held %v, resourceVersion %s -> %s)", held, oneBefore, v)
	}
	// -o name in one context, given to unlock in that context: that
	// cluster's lock.
	res = captf(t, kc, "--context", "one", "locks", "--verdict", "Stale", "-o", "name")
	if res.code != 0 || res.out != "lease.coordination.k8s.io/"+name+"\n" {
		t.Fatalf("--context one -o name: exit %d %q %q", res.code, res.out, res.err)
	}
	if res := captf(t, kc, "--context", "one", "unlock", "-n", ns, strings.TrimSpace(res.out), "--confirm"); res.code != 0 {
		t.Fatalf("unlock in context one: exit %d\n%s%s", res.code, res.out, res.err)
	}
	if _, held := lease(admin); held {
		t.Error("cluster one's lock is still held")
	}
}

// The cron check over every context fails when there is no context to
// read: a kubeconfig that is empty, or a $KUBECONFIG that names no file,
// reads nothing, and nothing read is not all clear (review27 M1).
func TestAllContextsWithNoContextFails(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := captf(t, empty, "locks", "--all-contexts", "--exit-code")
	if res.code != 1 || res.out != "" || !strings.Contains(res.err, "error: --all-contexts found no context in the kubeconfig") {
		t.Errorf("empty kubeconfig: exit %d, stdout %q, stderr %q", res.code, res.out, res.err)
	}
}
