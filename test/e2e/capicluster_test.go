package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// The Cluster API world of these tests, in two namespaces: Cluster prod
// has a TerraformCluster, and a machine in each namespace; Cluster dev a
// machine beside prod's. Each object is made as Cluster API makes it
// (its owner chain and cluster-name label: testbed.World), and each lock
// is taken by the real terraform, through a backend given CAPTF's labels
// for the object's Cluster (testbed.BackendLabels).
const (
	capiA = "capi-a"
	capiB = "capi-b"
)

var (
	prodTC = object.Ref{Kind: object.TerraformCluster, Namespace: capiA, Name: "prod"}
	prodM  = object.Ref{Kind: object.TerraformMachine, Namespace: capiA, Name: "prod-md-0"}
	devM   = object.Ref{Kind: object.TerraformMachine, Namespace: capiA, Name: "dev-md-0"}
	prodMB = object.Ref{Kind: object.TerraformMachine, Namespace: capiB, Name: "prod-md-0"}
	// goneM's object is gone; its Lease still carries prod's label.
	goneM   = object.Ref{Kind: object.TerraformMachine, Namespace: capiA, Name: "gone-md-0"}
	capiErr error
	capiRun sync.Once
)

func seedCAPI(t *testing.T) {
	t.Helper()
	capiRun.Do(func() {
		ctx := context.Background()
		for _, s := range []struct {
			r       object.Ref
			cluster string
			gone    bool
		}{{prodTC, "prod", false}, {prodM, "prod", false}, {devM, "dev", false}, {prodMB, "prod", false}, {goneM, "prod", true}} {
			if !s.gone {
				if capiErr = admin.Seed(ctx, s.r, testbed.Seeded{World: &testbed.World{Cluster: s.cluster}}); capiErr != nil {
					return
				}
			}
			b := testbed.Backend{Namespace: s.r.Namespace, Suffix: s.r.Suffix(), Labels: testbed.BackendLabels(s.r, s.cluster)}
			dir, err := tf.Init(ctx, b)
			if err == nil {
				_, err = tf.KilledLock(ctx, admin.Kube, dir, b, "")
			}
			if capiErr = err; err != nil {
				return
			}
		}
	})
	if capiErr != nil {
		t.Fatalf("seeding: %v", capiErr)
	}
}

// -o wide has a CLUSTER column after AGE: each lock's Cluster API Cluster.
func TestCAPIClusterWideColumn(t *testing.T) {
	seedCAPI(t)
	res := captf(t, kubeconfigIn(t, capiA), "locks", "-o", "wide")
	header, rows := tableRows(t, res.out)
	if res.code != 0 || len(header) < 6 || header[5] != "CLUSTER" {
		t.Fatalf("exit %d, header %q\n%s", res.code, header, res.err)
	}
	want := map[string]string{"terraformcluster/prod": "prod", "terraformmachine/prod-md-0": "prod", "terraformmachine/dev-md-0": "dev", "terraformmachine/gone-md-0": "<none>"}
	for _, r := range rows {
		if w := want[r["OBJECT"]]; r["CLUSTER"] != w {
			t.Errorf("%s: CLUSTER %q, want %q", r["OBJECT"], r["CLUSTER"], w)
		}
		delete(want, r["OBJECT"])
	}
	if len(want) != 0 {
		t.Errorf("rows missing: %v\n%s", want, res.out)
	}
}

// Each Lock of the JSON names its Cluster.
func TestCAPIClusterJSON(t *testing.T) {
	seedCAPI(t)
	list := locksJSON(t, bed.Kubeconfig, "-A")
	got := map[string]string{}
	for _, l := range list.Items {
		if l.Object != nil && (l.Namespace == capiA || l.Namespace == capiB) {
			got[l.Namespace+"/"+l.Object.Name] = l.Cluster
		}
	}
	want := map[string]string{"capi-a/prod": "prod", "capi-a/prod-md-0": "prod", "capi-a/dev-md-0": "dev", "capi-b/prod-md-0": "prod", "capi-a/gone-md-0": ""}
	if len(got) != len(want) {
		t.Errorf("clusters %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: cluster %q, want %q", k, got[k], w)
		}
	}
	// The field is there, empty, for a lock whose object is gone, though
	// its Lease's label names prod.
	res := captf(t, kubeconfigIn(t, capiA), "locks", "-o", "json")
	if n := strings.Count(res.out, `"cluster": `); n != 4 || !strings.Contains(res.out, `"cluster": ""`) {
		t.Errorf("%d cluster fields for 4 locks:\n%s", n, res.out)
	}
}

// --capi-cluster selects one Cluster's locks: in -n's namespace, or in
// every one with -A; a Cluster no object names lists nothing, said as
// kubectl says it.
func TestCAPIClusterFlag(t *testing.T) {
	seedCAPI(t)
	names := func(list *v1alpha1.LockList) []string {
		var out []string
		for _, l := range list.Items {
			out = append(out, l.Namespace+"/"+l.Object.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names(locksJSON(t, bed.Kubeconfig, "-A", "--capi-cluster", "prod")); !slices.Equal(got, []string{"capi-a/prod", "capi-a/prod-md-0", "capi-b/prod-md-0"}) {
		t.Errorf("-A --capi-cluster prod: %q", got)
	}
	if got := names(locksJSON(t, bed.Kubeconfig, "-n", capiA, "--capi-cluster", "prod")); !slices.Equal(got, []string{"capi-a/prod", "capi-a/prod-md-0"}) {
		t.Errorf("-n capi-a --capi-cluster prod: %q", got)
	}
	if got := names(locksJSON(t, bed.Kubeconfig, "-A", "--capi-cluster", "dev")); !slices.Equal(got, []string{"capi-a/dev-md-0"}) {
		t.Errorf("-A --capi-cluster dev: %q", got)
	}
	// A TerraformCluster whose label disagrees with its owner reference
	// is its label's, as CAPTF names it for its Jobs: an owner reference
	// CAPTF calls forged does not hide its lock (review29c M1).
	relabel := func(cluster string) {
		t.Helper()
		if err := admin.PatchObject(t.Context(), prodTC, map[string]any{"metadata": map[string]any{"labels": map[string]any{testbed.ClusterNameLabel: cluster}}}); err != nil {
			t.Fatal(err)
		}
	}
	relabel("not-its-owner")
	gotLabel := names(locksJSON(t, bed.Kubeconfig, "-A", "--capi-cluster", "not-its-owner"))
	gotOwner := names(locksJSON(t, bed.Kubeconfig, "-A", "--capi-cluster", "prod"))
	relabel("prod")
	if !slices.Equal(gotLabel, []string{"capi-a/prod"}) || slices.Contains(gotOwner, "capi-a/prod") {
		t.Errorf("label not-its-owner, owner prod: --capi-cluster not-its-owner %q, --capi-cluster prod %q", gotLabel, gotOwner)
	}
	// The Lease's label, which -l selects on, still names prod for the
	// lock whose object is gone.
	if got := names(locksJSON(t, bed.Kubeconfig, "-n", capiA, "-l", testbed.ClusterNameLabel+"=prod")); !slices.Equal(got, []string{"capi-a/gone-md-0", "capi-a/prod", "capi-a/prod-md-0"}) {
		t.Errorf("-l %s=prod: %q", testbed.ClusterNameLabel, got)
	}
	res := captf(t, kubeconfigIn(t, capiA), "locks", "--capi-cluster", "nowhere")
	if res.code != 0 || res.out != "" || res.err != "No resources found in capi-a namespace.\n" {
		t.Errorf("an unknown Cluster: exit %d, out %q, err %q", res.code, res.out, res.err)
	}
	res = captf(t, bed.Kubeconfig, "locks", "-A", "--capi-cluster", "Not_A_Name")
	if res.code != 1 || !strings.HasPrefix(res.err, `error: --capi-cluster "Not_A_Name" is not a Cluster's name`) {
		t.Errorf("an invalid name: exit %d, err %q", res.code, res.err)
	}
}

// explain names the Cluster and prints the clusterctl command to run
// next, bound to the kubeconfig and context it read; pasted into an
// interactive bash, zsh and fish it runs clusterctl with exactly that
// argv. With a connection flag clusterctl cannot take, it prints a note
// that names it, and no clusterctl command.
func TestCAPIClusterExplain(t *testing.T) {
	seedCAPI(t)
	// The test-bed under a context name a shell would expand, in a file
	// whose path has a space.
	cfg, err := clientcmd.LoadFromFile(kubeconfigIn(t, capiA))
	if err != nil {
		t.Fatal(err)
	}
	ctxName := "mgmt !!$x"
	cfg.Contexts[ctxName], cfg.CurrentContext = cfg.Contexts[cfg.CurrentContext], ctxName
	dir := filepath.Join(t.TempDir(), "my kube")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(dir, "config")
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}
	res := captf(t, kc, "explain", prodM.String())
	if res.code != 0 || !regexp.MustCompile(`(?m)^Cluster: +prod$`).MatchString(res.out) {
		t.Fatalf("no Cluster line: exit %d\n%s%s", res.code, res.out, res.err)
	}
	var x v1alpha1.Explanation
	if err := json.Unmarshal([]byte(captf(t, kc, "explain", prodM.String(), "-o", "json").out), &x); err != nil || x.Cluster != "prod" {
		t.Fatalf("JSON: %v, cluster %q", err, x.Cluster)
	}
	var want []string
	var printed string
	for _, a := range x.Advice {
		if len(a.Argv) > 0 && a.Argv[0] == "clusterctl" {
			want, printed = a.Argv, a.Command
		}
	}
	if !slices.Equal(want, []string{"clusterctl", "describe", "cluster", "prod", "-n", capiA, "--show-conditions", "all", "--kubeconfig", kc, "--kubeconfig-context", ctxName}) {
		t.Fatalf("clusterctl argv %q", want)
	}
	// The text holds the same command, laid out over lines that end in
	// a backslash.
	var line string
	lines := strings.Split(res.out, "\n")
	for i := 0; i < len(lines); i++ {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "clusterctl ") {
			line = l
			for strings.HasSuffix(line, " \\") && i+1 < len(lines) {
				i++
				line += "\n" + lines[i]
			}
		}
	}
	if flat(line) != printed {
		t.Fatalf("explain prints %q, its JSON %q", line, printed)
	}
	for _, sh := range interactiveShells {
		got, dir := pasteInto(t, sh.command, line, "")
		if !slices.Equal(got, want) {
			t.Errorf("%s: pasted\n%s\nran %q, want %q", sh.name, line, got, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
			t.Errorf("%s: pasting ran something else", sh.name)
		}
	}
	// Impersonating: clusterctl cannot, so no command, and a note says why.
	res = captf(t, kubeconfigIn(t, capiA), "--as", "someone", "--as-group", "system:masters", "explain", prodM.String())
	if res.code != 0 || strings.Contains(res.out, "clusterctl describe cluster prod") ||
		!strings.Contains(flat(res.out), "clusterctl describe cluster shows the Cluster this lock belongs to, but it cannot be given --as, --as-group as this run was") {
		t.Errorf("with --as: exit %d\n%s%s", res.code, res.out, res.err)
	}
	// A $KUBECONFIG list: no one file holds the run's configuration, so
	// the printed kubectl commands carry the server's URL, which
	// clusterctl cannot take; the note names that, not a --server the run
	// was never given (review29c n3).
	cmd := exec.Command(plugin, "explain", prodM.String())
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfigIn(t, capiA)+string(os.PathListSeparator)+filepath.Join(t.TempDir(), "absent"), "NO_COLOR=")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "clusterctl describe cluster prod") || strings.Contains(flat(string(out)), "cannot be given --server") ||
		!strings.Contains(flat(string(out)), "clusterctl describe cluster shows the Cluster this lock belongs to, but it cannot be given the API server's URL (this run's configuration came from a $KUBECONFIG list") {
		t.Errorf("with a $KUBECONFIG list: %v\n%s", err, out)
	}
}

// unlock's Holder line quotes an operation the holder wrote, as it
// quotes the holder's Who and the lock ID beside it: a holder cannot
// fake the rest of the line.
func TestUnlockHolderLineQuotesTheOperation(t *testing.T) {
	const ns = "holder-op"
	r := newObject(t, ns, object.TerraformMachine, "ws")
	id := "7a7a7a7a-0000-4000-8000-000000000001"
	b, err := json.Marshal(map[string]any{"ID": id, "Operation": `apply, lock ID "fake")`, "Info": "", "Who": "alice@laptop", "Version": "1.11.4", "Created": t0.UTC(), "Path": ""})
	if err != nil {
		t.Fatal(err)
	}
	info := string(b)
	syntheticLock(t, r, id, "alice@laptop", &info)
	res := captf(t, kubeconfigIn(t, ns), "unlock", r.String())
	out := flat(res.out + res.err)
	if !strings.Contains(out, `"alice@laptop" ("apply, lock ID \"fake\")", for `) || strings.Contains(out, `(apply, lock ID "fake")`) {
		t.Errorf("the Holder line does not quote the operation:\n%s%s", res.out, res.err)
	}
}

// With -w, a lock whose object moves to another Cluster is DELETED under
// --capi-cluster of the old one, and ADDED under the new one's, as
// docs/locks.md says (review29c m2): the Cluster is part of what a
// watch compares.
func TestCAPIClusterWatchFollowsTheLabel(t *testing.T) {
	seedCAPI(t)
	relabel := func(cluster string) {
		t.Helper()
		if err := admin.PatchObject(context.Background(), devM, map[string]any{"metadata": map[string]any{"labels": map[string]any{testbed.ClusterNameLabel: cluster}}}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { relabel("dev") })
	dev, devCmd := watchVia(t, kubeconfigIn(t, capiA), "--capi-cluster", "dev")
	if e := next(t, dev, "dev's first list"); e.Type != "ADDED" || e.Object.Object.Name != devM.Name || e.Object.Cluster != "dev" {
		t.Fatalf("--capi-cluster dev, first list: %s %s cluster %q", e.Type, e.Object.Name, e.Object.Cluster)
	}
	staging, stagingCmd := watchVia(t, kubeconfigIn(t, capiA), "--capi-cluster", "staging")
	relabel("staging")
	if e := next(t, dev, "dev-md-0 leaving Cluster dev"); e.Type != "DELETED" || e.Object.Object.Name != devM.Name {
		t.Errorf("--capi-cluster dev after the move: %s %s cluster %q", e.Type, e.Object.Name, e.Object.Cluster)
	}
	if e := next(t, staging, "dev-md-0 joining Cluster staging"); e.Type != "ADDED" || e.Object.Object.Name != devM.Name || e.Object.Cluster != "staging" {
		t.Errorf("--capi-cluster staging after the move: %s %s cluster %q", e.Type, e.Object.Name, e.Object.Cluster)
	}
	for _, c := range []*exec.Cmd{devCmd, stagingCmd} {
		if code := interrupt(t, c); code != 130 {
			t.Errorf("exit %d after Ctrl-C", code)
		}
	}
}
