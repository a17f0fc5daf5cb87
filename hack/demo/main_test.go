package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// A lock ID looks as Terraform's do: 8-4-4-4-12 lowercase hex.
func TestLockID(t *testing.T) {
	a, err := lockID()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := lockID()
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(a) || a == b {
		t.Errorf("lock IDs %q and %q", a, b)
	}
}

// The demo's Leases carry every label CAPTF passes the backend.
func TestBackendLabels(t *testing.T) {
	l := backendLabels(object.Ref{Kind: object.TerraformMachine, Namespace: "demo", Name: "web-1"})
	for k, v := range map[string]string{
		"captf.infrastructure.cluster.x-k8s.io/owner-kind": "TerraformMachine",
		"captf.infrastructure.cluster.x-k8s.io/owner-name": "web-1",
		"cluster.x-k8s.io/cluster-name":                    "demo",
		"captf.io/managed":                                 "true",
		"clusterctl.cluster.x-k8s.io/move":                 "",
	} {
		if got, ok := l[k]; !ok || got != v {
			t.Errorf("label %s = %q (set: %v), want %q", k, got, ok, v)
		}
	}
}

// The preflight stops, before any build, with one line naming what is
// missing: a Go too old, or none.
func TestPreflight(t *testing.T) {
	bin := t.TempDir()
	fake := "#!/bin/sh\ncase \"$1 $2\" in 'env GOVERSION') echo go1.20.1 ;; 'env GOPROXY') echo https://proxy.golang.org ;; esac\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)[1]
	for _, c := range []struct{ path, want string }{
		{bin + ":/usr/bin:/bin", "make demo: needs Go " + string(want) + " or later; go on PATH is go1.20.1"},
		{t.TempDir() + ":/usr/bin:/bin", "make demo: needs Go " + string(want) + " or later on PATH"},
	} {
		if _, err := os.Stat("/usr/bin/go"); err == nil {
			t.Fatal("/usr/bin/go would be found")
		}
		cmd := exec.Command("bash", "preflight.sh")
		cmd.Env = append(os.Environ(), "PATH="+c.path, "CAPTF_TESTBED_DIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err == nil || strings.Count(string(out), "\n") != 1 || !strings.HasPrefix(string(out), c.want) {
			t.Errorf("PATH=%s: %v, output %q; want one line starting %q", c.path, err, out, c.want)
		}
	}
}
