package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/cmd"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// check is the documented check (README, docs/locks.md, docs/cronjob.yaml),
// without -A.
var cronCheck = []string{"locks", "--verdict", "Stale,Foreign,Unknown", "--older-than", "30m", "--exit-code"}

// The check a CronJob or a CI step runs (docs/cronjob.yaml), on the real
// test-bed: it prints what it finds as `locks` always does, and exits 0
// when it finds nothing, 4 when it finds a lock, 1 on bad input or when a
// cluster it was asked about cannot be read.
func TestExitCode(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	held := func(r object.Ref, id, who string, age time.Duration) {
		t.Helper()
		info := testbed.LockInfo(id, who, now.Add(-age))
		syntheticLock(t, r, id, who, &info)
	}
	// run runs the check (and more arguments) with a kubeconfig.
	run := func(kc string, more ...string) result {
		t.Helper()
		return captf(t, kc, append(slices.Clone(cronCheck), more...)...)
	}

	// Namespace exitcode-quiet: nothing the check is after. A young
	// foreign lock, an old live one (not asked for) and a free Lease.
	const quiet = "exitcode-quiet"
	young := newObject(t, quiet, object.TerraformMachine, "young")
	held(young, "11111111-0000-4000-8000-000000000001", "alice@laptop", 5*time.Minute)
	live := newObject(t, quiet, object.TerraformCluster, "live")
	livePod := runner.JobName(live.Kind, live.Name, "apply", 1, "abc123") + "-x7k2p"
	held(live, "11111111-0000-4000-8000-000000000002", "root@"+livePod, 2*time.Hour)
	if _, err := admin.RunnerPod(ctx, live, livePod, "Running"); err != nil {
		t.Fatal(err)
	}
	free := newObject(t, quiet, object.TerraformMachinePool, "free")
	if _, err := admin.LockLease(ctx, quiet, free.Suffix(), testbed.BackendLabels(free, testbed.ObjectCluster), nil, nil); err != nil {
		t.Fatal(err)
	}
	kcQuiet := kubeconfigIn(t, quiet)
	if res := captf(t, kcQuiet, "locks", "-o", "name"); strings.Count(res.out, "\n") != 3 {
		t.Fatalf("the three locks of %s are not all listed: %+v", quiet, res)
	}
	res := run(kcQuiet)
	if res.code != 0 || res.out != "" || res.err != "No resources found in "+quiet+" namespace.\n" {
		t.Errorf("nothing found: exit %d, stdout %q, stderr %q; want 0 and kubectl's line", res.code, res.out, res.err)
	}
	for _, format := range []string{"json", "yaml", "name"} {
		if res := run(kcQuiet, "-o", format); res.code != 0 || res.err != "" {
			t.Errorf("-o %s, nothing found: exit %d, stderr %q", format, res.code, res.err)
		}
	}
	// The free Lease has no age: --older-than leaves it out even when
	// its verdict is asked for.
	if res := captf(t, kcQuiet, "locks", "--verdict", "Unlocked", "--older-than", "0s", "--exit-code"); res.code != 0 || res.out != "" {
		t.Errorf("an Unlocked lock with --older-than: exit %d\n%s", res.code, res.out)
	}
	// The same namespace with the live lock asked for: it is two hours
	// old, so found.
	if res := captf(t, kcQuiet, "locks", "--verdict", "Live", "--older-than", "30m", "--exit-code"); res.code != cmd.ExitFound || !strings.Contains(res.out, "terraformcluster/live") {
		t.Errorf("the old live lock: exit %d\n%s%s", res.code, res.out, res.err)
	}

	// Namespace exitcode-found: a stale lock held for 45 minutes (its
	// runner pod gone), and a lock whose info has no created time (its
	// age unknown, so kept).
	const found = "exitcode-found"
	stale := newObject(t, found, object.TerraformCluster, "stale")
	held(stale, "22222222-0000-4000-8000-000000000001", "root@"+runner.JobName(stale.Kind, stale.Name, "apply", 1, "abc123")+"-q8w7e", 45*time.Minute)
	fresh := newObject(t, found, object.TerraformMachine, "fresh")
	held(fresh, "22222222-0000-4000-8000-000000000002", "bob@desk", time.Minute)
	undated := newObject(t, found, object.TerraformMachinePool, "undated")
	info := `{"ID":"22222222-0000-4000-8000-000000000003","Operation":"OperationTypeApply","Who":"carol@vm","Version":"1.11.4"}`
	syntheticLock(t, undated, "22222222-0000-4000-8000-000000000003", "carol@vm", &info)
	kcFound := kubeconfigIn(t, found)

	res = run(kcFound)
	if res.code != cmd.ExitFound || res.err != "" {
		t.Errorf("found: exit %d, want %d\n%s%s", res.code, cmd.ExitFound, res.out, res.err)
	}
	if rows := strings.Split(strings.TrimSpace(res.out), "\n"); len(rows) != 3 || !strings.HasPrefix(rows[0], "OBJECT") ||
		!strings.Contains(res.out, "terraformcluster/stale ") || !strings.Contains(res.out, "terraformmachinepool/undated ") || strings.Contains(res.out, "fresh") {
		t.Errorf("found: want the table of the stale and the undated lock, not the fresh one:\n%s", res.out)
	}
	res = run(kcFound, "-o", "json")
	var list v1alpha1.LockList
	if err := json.Unmarshal([]byte(res.out), &list); err != nil || res.code != cmd.ExitFound {
		t.Fatalf("-o json: exit %d, %v\n%s", res.code, err, res.out)
	}
	var got []string
	for _, l := range list.Items {
		got = append(got, l.Object.Name+"="+string(l.Verdict))
	}
	slices.Sort(got)
	if want := []string{"stale=Stale", "undated=Foreign"}; !slices.Equal(got, want) {
		t.Errorf("-o json lists %q, want %q", got, want)
	}
	for _, l := range list.Items {
		if l.Object.Name == "undated" && (l.Lock == nil || l.Lock.Created != nil) {
			t.Errorf("the undated lock has a created time: %+v", l.Lock)
		}
	}
	if res := run(kcFound, "-o", "name"); res.code != cmd.ExitFound || strings.Count(res.out, "lease.coordination.k8s.io/") != 2 {
		t.Errorf("-o name: exit %d\n%s", res.code, res.out)
	}
	if res := run(kcFound, "-o", "yaml"); res.code != cmd.ExitFound || strings.Count(res.out, "verdict: ") != 2 {
		t.Errorf("-o yaml: exit %d\n%s", res.code, res.out)
	}
	// Everywhere, as the CronJob runs it: found, whatever else is there.
	if res := run(kcQuiet, "-A"); res.code != cmd.ExitFound || !strings.Contains(res.out, found+" ") {
		t.Errorf("-A: exit %d\n%s", res.code, res.out)
	}
	// Without --exit-code, the same listing ends 0.
	if res := captf(t, kcFound, cronCheck[:len(cronCheck)-1]...); res.code != 0 || !strings.Contains(res.out, "terraformcluster/stale") {
		t.Errorf("without --exit-code: exit %d", res.code)
	}

	// Several clusters: 4 if any lists a lock; a cluster that cannot be
	// read, with nothing found elsewhere, is an error.
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: up
  cluster: {server: "` + bed.Server + `", certificate-authority: "` + bed.CAFile + `"}
- name: down
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: admin
  user: {token: "` + testbed.Token(testbed.AdminUser) + `"}
contexts:
- name: quiet
  context: {cluster: up, user: admin, namespace: ` + quiet + `}
- name: found
  context: {cluster: up, user: admin, namespace: ` + found + `}
- name: down
  context: {cluster: down, user: admin, namespace: default}
current-context: quiet
`
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		contexts string
		code     int
		stderr   string
	}{
		{"quiet", 0, "No resources found\n"},
		{"quiet,found", cmd.ExitFound, ""},
		{"found,down", cmd.ExitFound, "Warning: context down: "},
		{"quiet,down", 1, "error: nothing was found, but context down could not be read: with --exit-code that is not all clear\n"},
	} {
		res := run(kc, "--contexts", c.contexts, "--context-timeout", "10s")
		if res.code != c.code || !strings.Contains(res.err, c.stderr) || (c.code == cmd.ExitFound) != regexp.MustCompile(`(?m)^found +terraformcluster/stale +Stale`).MatchString(res.out) {
			t.Errorf("--contexts %s: exit %d, want %d\n%s%s", c.contexts, res.code, c.code, res.out, res.err)
		}
	}

	// Bad input: one line, exit 1, nothing on stdout.
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"locks", "--older-than", "-30m", "--exit-code"}, "error: --older-than -30m0s is negative"},
		{[]string{"locks", "--older-than", "30", "--exit-code"}, `error: invalid argument "30" for "--older-than" flag`},
		{[]string{"locks", "--exit-code", "-w"}, "error: --exit-code reports one listing's result; it does not go with --watch"},
		{[]string{"locks", "--older-than", "1h", "-w"}, "error: --older-than does not go with --watch"},
	} {
		res := captf(t, kcFound, c.args...)
		if res.code != 1 || res.out != "" || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, c.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 1 and one line %q", c.args, res.code, res.out, res.err, c.err)
		}
	}
}

// docs/cronjob.yaml is accepted by a real API server as it is (strict
// field validation), its ClusterRole is docs/rbac.md's read-only one, and
// its container's command, run with its ServiceAccount's own token, finds
// an old stale lock in another namespace with exit 4 and no warning: the
// role is enough for it.
func TestCronJobManifest(t *testing.T) {
	ctx := context.Background()
	b, err := os.ReadFile("../../docs/cronjob.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var (
		sa      *corev1.ServiceAccount
		role    *rbacv1.ClusterRole
		cronJob *batchv1.CronJob
		kinds   []string
	)
	strict := metav1.CreateOptions{FieldValidation: "Strict"}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("docs/cronjob.yaml: %v\n%s", err, doc)
		}
		kinds = append(kinds, gvk.Kind)
		switch o := obj.(type) {
		case *corev1.Namespace:
			_, err = admin.Kube.CoreV1().Namespaces().Create(ctx, o, strict)
			t.Cleanup(func() { _ = admin.Kube.CoreV1().Namespaces().Delete(ctx, o.Name, metav1.DeleteOptions{}) })
		case *corev1.ServiceAccount:
			sa = o
			_, err = admin.Kube.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, strict)
		case *rbacv1.ClusterRole:
			role = o
			// The same role as docs/rbac.md's: TestDocumentedRBAC creates
			// it too, so it is removed again afterwards.
			_, err = admin.Kube.RbacV1().ClusterRoles().Create(ctx, o, strict)
			t.Cleanup(func() { _ = admin.Kube.RbacV1().ClusterRoles().Delete(ctx, o.Name, metav1.DeleteOptions{}) })
		case *rbacv1.ClusterRoleBinding:
			_, err = admin.Kube.RbacV1().ClusterRoleBindings().Create(ctx, o, strict)
			t.Cleanup(func() { _ = admin.Kube.RbacV1().ClusterRoleBindings().Delete(ctx, o.Name, metav1.DeleteOptions{}) })
		case *batchv1.CronJob:
			cronJob = o
			_, err = admin.Kube.BatchV1().CronJobs(o.Namespace).Create(ctx, o, strict)
		default:
			t.Fatalf("docs/cronjob.yaml: an object this test does not know: %s", gvk)
		}
		if err != nil {
			t.Fatalf("creating the %s of docs/cronjob.yaml: %v", gvk.Kind, err)
		}
	}
	if want := []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "CronJob"}; !slices.Equal(kinds, want) {
		t.Fatalf("docs/cronjob.yaml holds %q, want %q", kinds, want)
	}
	doc := rolesFromDoc(t)["captf-locks-viewer"]
	if doc == nil || role.Name != doc.Name || !reflect.DeepEqual(role.Rules, doc.Rules) {
		t.Errorf("the CronJob's ClusterRole is not docs/rbac.md's read-only one:\n%+v\n%+v", role, doc)
	}
	pod := cronJob.Spec.JobTemplate.Spec.Template.Spec
	if pod.ServiceAccountName != sa.Name || len(pod.Containers) != 1 {
		t.Fatalf("the CronJob's pod: service account %q, %d containers", pod.ServiceAccountName, len(pod.Containers))
	}
	c := pod.Containers[0]
	if want := append([]string{"kubectl-captf", "locks", "-A"}, cronCheck[1:]...); !slices.Equal(append(slices.Clone(c.Command), c.Args...), want) {
		t.Errorf("the CronJob runs %q, want the documented check %q", append(c.Command, c.Args...), want)
	}
	if bl := cronJob.Spec.JobTemplate.Spec.BackoffLimit; bl == nil || *bl != 0 {
		t.Errorf("backoffLimit %v: a found lock would be retried before the Job fails", bl)
	}

	// An old stale lock where the ServiceAccount's namespace is not.
	stale := newObject(t, "cronjob-target", object.TerraformCluster, "old")
	info := testbed.LockInfo("33333333-0000-4000-8000-000000000001", "root@"+runner.JobName(stale.Kind, stale.Name, "apply", 1, "abc123")+"-q8w7e", time.Now().Add(-45*time.Minute))
	syntheticLock(t, stale, "33333333-0000-4000-8000-000000000001", "", &info)
	tok, err := admin.Kube.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: bed
  cluster: {server: "` + bed.Server + `", certificate-authority: "` + bed.CAFile + `"}
users:
- name: sa
  user: {token: "` + tok.Status.Token + `"}
contexts:
- name: sa
  context: {cluster: bed, user: sa}
current-context: sa
`
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	res := captf(t, kc, c.Args...)
	if res.code != cmd.ExitFound || !regexp.MustCompile(`(?m)^cronjob-target +terraformcluster/old +Stale `).MatchString(res.out) || res.err != "" {
		t.Errorf("the CronJob's check as its ServiceAccount: exit %d, want %d and the stale lock, no warning\n%s%s", res.code, cmd.ExitFound, res.out, res.err)
	}
	// The ServiceAccount reads only: it cannot clear the lock.
	if res := captf(t, kc, "unlock", "terraformcluster/old", "-n", "cronjob-target", "--confirm"); res.code == 0 || getLease(t, stale).Spec.HolderIdentity == nil {
		t.Errorf("the CronJob's ServiceAccount cleared a lock: exit %d\n%s%s", res.code, res.out, res.err)
	}
}
