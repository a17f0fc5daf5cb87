package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hack/release/krew-index.sh puts krew/captf.yaml, filled in for a
// release, on the main branch of the repository as plugins/captf.yaml,
// which is what `kubectl krew index add captf <repository>` reads; the
// next release replaces it, which is what `krew upgrade` follows. (make
// release-check installs and upgrades through it with krew.)
func TestKrewIndexFollowsReleases(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	remote := filepath.Join(dir, "index.git")
	git("init", "-q", "--bare", remote)
	git("-C", remote, "symbolic-ref", "HEAD", "refs/heads/main")
	seed := filepath.Join(dir, "seed")
	git("init", "-q", seed)
	if err := os.WriteFile(filepath.Join(seed, "README.md"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("-C", seed, "add", ".")
	git("-C", seed, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "seed")
	git("-C", seed, "push", "-q", remote, "HEAD:refs/heads/main")

	sums := filepath.Join(dir, "checksums.txt")
	var b strings.Builder
	for _, p := range []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64", "windows_arm64"} {
		b.WriteString(strings.Repeat("ab", 32) + "  kubectl-captf_" + p + ".tar.gz\n")
	}
	if err := os.WriteFile(sums, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v1.2.3", "v1.2.4"} {
		cmd := exec.Command("bash", "../../hack/release/krew-index.sh", v, sums, remote)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("krew-index.sh %s: %v\n%s", v, err, out)
		}
		m := git("-C", remote, "show", "main:plugins/captf.yaml")
		if !strings.Contains(m, "\n  version: "+v+"\n") || !strings.Contains(m, "/releases/download/"+v+"/kubectl-captf_linux_amd64.tar.gz") ||
			strings.Count(m, strings.Repeat("ab", 32)) != 6 {
			t.Errorf("plugins/captf.yaml on main after %s:\n%s", v, m)
		}
	}
	if log := git("-C", remote, "log", "--format=%s", "main"); strings.Count(log, "\n") != 3 {
		t.Errorf("main's history: want the seed and one commit per release:\n%s", log)
	}
}

// The caveat keeps the completion lines and says how to remove the copied
// shim; the k9s pointer is documentation, not a caveat. krew search finds
// the plugin by Cluster API and OpenTofu.
func TestKrewCaveatAndShortDescription(t *testing.T) {
	m := manifest(t, filepath.Join("..", "..", "krew", "captf.yaml"))
	spec := m["spec"].(map[string]any)
	caveats, short := spec["caveats"].(string), spec["shortDescription"].(string)
	for _, want := range []string{"cp \"${KREW_ROOT:-$HOME/.krew}\"/store/captf/*/kubectl_complete-captf", "kubectl_complete-captf.cmd", "rm \"${KREW_ROOT:-$HOME/.krew}\"/bin/kubectl_complete-captf"} {
		if !strings.Contains(caveats, want) {
			t.Errorf("the caveat lacks %q", want)
		}
	}
	if strings.Contains(caveats, "k9s") || len(caveats) > 450 {
		t.Errorf("the caveat (%d characters) should hold the completion lines only:\n%s", len(caveats), caveats)
	}
	if !strings.Contains(short, "Cluster API") || !strings.Contains(short, "OpenTofu") {
		t.Errorf("shortDescription %q names neither Cluster API nor OpenTofu", short)
	}
}
