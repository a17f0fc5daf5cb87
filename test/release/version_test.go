//go:build release

package release

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/captf-io/kubectl-captf/pkg/version"
)

// fromEnv is what `make release-check` sets in the variable name; the
// test fails without it, for these tests are run only there.
func fromEnv(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set: these tests check the artefacts of `make release-check`, which runs them", name)
	}
	return v
}

// versionOf runs `kubectl-captf version -o json`.
func versionOf(t *testing.T, bin string) version.Info {
	t.Helper()
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("%s version -o json: %v", bin, err)
	}
	var v version.Info
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s version -o json: %v\n%s", bin, err, out)
	}
	return v
}

// The release binary prints the version krew lists for it (v0.1.0 for the
// tag v0.1.0, not goreleaser's 0.1.0), and `make build` of the same version
// prints the same version, commit and date: the commit's date, so that a
// build is reproducible. check.sh builds CAPTF_MAKE_BIN from the tree the
// snapshot in CAPTF_DIST was built from.
func TestVersionAgreesWithMakeBuild(t *testing.T) {
	dist, makeBin := fromEnv(t, "CAPTF_DIST"), fromEnv(t, "CAPTF_MAKE_BIN")
	dist = filepath.Join("..", "..", dist)
	b, err := os.ReadFile(filepath.Join(dist, "krew", "captf.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Spec struct {
			Version string `json:"version"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	exe := "kubectl-captf"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	// dist/kubectl-captf_linux_amd64_v1/kubectl-captf: goreleaser adds the
	// GOAMD64 (or GOARM64) level to the folder's name.
	bins, _ := filepath.Glob(filepath.Join(dist, "kubectl-captf_"+runtime.GOOS+"_"+runtime.GOARCH+"*", exe))
	if len(bins) != 1 {
		t.Fatalf("no one release binary for %s/%s in %s: %v", runtime.GOOS, runtime.GOARCH, dist, bins)
	}

	release, made := versionOf(t, bins[0]), versionOf(t, makeBin)
	if release.Version != m.Spec.Version || release.Version[0] != 'v' {
		t.Errorf("release binary prints version %q, krew lists %q", release.Version, m.Spec.Version)
	}
	if release.Version != made.Version || release.Commit != made.Commit || release.Date != made.Date {
		t.Errorf("release binary prints %+v, make build prints %+v", release, made)
	}
	if d, err := time.Parse(time.RFC3339, release.Date); err != nil || d.Location() != time.UTC {
		t.Errorf("date %q is not RFC 3339 in UTC: %v", release.Date, err)
	}
	if len(release.Commit) < 7 {
		t.Errorf("commit %q is not an abbreviated commit hash", release.Commit)
	}
}
