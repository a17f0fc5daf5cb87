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
