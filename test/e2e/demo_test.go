package e2e

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/captf-io/kubectl-captf/test/testbed"
)

// `make demo` runs where unshare is refused (macOS has none; a user
// without root may not make a UTS namespace) and without terraform: it
// writes its locks as the backend does. It runs in a copy of the working
// tree, whose .demo and bin it writes, with unshare and terraform on PATH
// as stubs that fail, and ends with the table of one lock of each verdict.
func TestDemoRunsWithoutUnshareOrTerraform(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tree := copyTree(t, root)
	stubs := t.TempDir()
	used := filepath.Join(stubs, "used")
	for _, name := range []string{"unshare", "terraform", "tofu"} {
		stub := "#!/bin/sh\necho " + name + " >> " + used + "\necho \"" + name + ": Operation not permitted\" >&2\nexit 1\n"
		if err := os.WriteFile(filepath.Join(stubs, name), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bins, err := testbed.Binaries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+stubs+string(os.PathListSeparator)+os.Getenv("PATH"),
		"CAPTF_TESTBED_DIR="+filepath.Dir(bins), "CHECKPOINT_DISABLE=1", "NO_COLOR=1")
	makeIn := func(target string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "make", "--no-print-directory", target)
		cmd.Dir, cmd.Env = tree, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("make %s: %v\n%s", target, err, out.String())
		}
		return out.String()
	}
	t.Cleanup(func() { makeIn("demo-stop") })
	out := makeIn("demo")
	if b, _ := os.ReadFile(used); len(b) > 0 {
		t.Errorf("make demo ran %s", strings.Fields(string(b)))
	}
	_, table, ok := strings.Cut(out, "$ kubectl captf locks -A\n")
	if !ok {
		t.Fatalf("no table:\n%s", out)
	}
	want := map[string]string{
		"terraformcluster/demo": "Stale", "terraformmachine/web-1": "Live", "terraformmachine/db": "Foreign",
		"terraformmachinepool/workers": "Unknown", "terraformcluster/edge": "Unlocked",
	}
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 2 && want[f[1]] != "" {
			if f[2] != want[f[1]] {
				t.Errorf("%s is %s, want %s", f[1], f[2], want[f[1]])
			}
			delete(want, f[1])
		}
	}
	if len(want) > 0 {
		t.Errorf("not in the table: %v\n%s", want, out)
	}
	// The export line it prints puts the plugin first on PATH and the
	// test-bed's kubectl last, for a machine that has none.
	wantExport := "  export KUBECONFIG=" + filepath.Join(tree, ".demo", "kubeconfig") + " PATH=" + filepath.Join(tree, "bin") + ":$PATH:" + testbed.PathDir(bins) + "\n"
	if !strings.Contains(out, wantExport) {
		t.Errorf("no line %q in:\n%s", wantExport, out)
	}
	// Each object carries its Cluster's name as the label its Lease has.
	wide := exec.Command(filepath.Join(tree, "bin", "kubectl-captf"), "--kubeconfig", filepath.Join(tree, ".demo", "kubeconfig"), "locks", "-A", "-o", `jsonpath={range .items[*]}{.metadata.namespace} {.object.name} {.cluster} {.metadata.labels.cluster\.x-k8s\.io/cluster-name}{"\n"}{end}`)
	b, err := wide.CombinedOutput()
	if err != nil {
		t.Fatalf("locks -o jsonpath: %v\n%s", err, b)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(line); len(f) != 4 || f[2] != f[0] || f[3] != f[0] {
			t.Errorf("namespace, object, Cluster, the Lease's cluster-name label: %q; want the Cluster and the label named as the namespace", line)
		}
	}
}

// `make test` checks what its end-to-end tests need before it builds or
// runs anything, and names everything missing in one line: here unshare
// is refused, as for a user without root, and terraform, zsh, fish and
// script are not on PATH.
func TestMakeTestNamesWhatIsMissingFirst(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"make", "bash", "uname"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "unshare"), []byte("#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"test", "e2e"} {
		cmd := exec.Command(filepath.Join(dir, "make"), "--no-print-directory", "-C", root, target)
		cmd.Env = append(os.Environ(), "PATH="+dir)
		out, err := cmd.CombinedOutput()
		want := "make " + target + ": needs root (unshare --uts is refused here), terraform v1.11.4 on PATH, zsh, fish, script; `make unit` runs the unit tests without them, `make demo` the plugin\n"
		if err == nil || !strings.HasPrefix(string(out), want) {
			t.Errorf("make %s: %v, output %q; want it to start %q", target, err, out, want)
		}
		if strings.Contains(string(out), "go vet") || strings.Contains(string(out), "go test") {
			t.Errorf("make %s ran on past the check:\n%s", target, out)
		}
	}
}

// copyTree copies the repository's working tree (tracked and untracked
// files git does not ignore) into a temporary directory.
func copyTree(t *testing.T, root string) string {
	t.Helper()
	list, err := exec.Command("git", "-C", root, "ls-files", "-z", "-co", "--exclude-standard").Output()
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		src := filepath.Join(root, name)
		fi, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		in, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.OpenFile(filepath.Join(dst, name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
		if err == nil {
			_, err = io.Copy(out, in)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
