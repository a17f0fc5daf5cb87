//go:build codegen

package v1alpha1

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const generatedFile = "zz_generated.deepcopy.go"

// TestGeneratedDeepCopyIsUpToDate runs the deepcopy-gen that go.mod pins
// on a copy of this package, in a module of its own in a temporary
// directory, and compares its output with the committed file. Nothing is
// written into the tree. It needs no network once `go mod download` has
// filled the module cache: `go tool` builds deepcopy-gen from there.
func TestGeneratedDeepCopyIsUpToDate(t *testing.T) {
	t.Parallel() // type-checking the package's imports takes some seconds
	root := filepath.Join("..", "..", "..")
	tmp := t.TempDir()
	pkg := filepath.Join("pkg", "api", "v1alpha1")
	if err := os.MkdirAll(filepath.Join(tmp, pkg), 0o755); err != nil {
		t.Fatal(err)
	}
	// go.mod has no replace directive that points into the tree; were one
	// added, it would have to be copied too.
	for _, f := range []string{"go.mod", "go.sum"} {
		copyFile(t, filepath.Join(root, f), filepath.Join(tmp, f))
	}
	sources, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range sources {
		if f != generatedFile && !strings.HasSuffix(f, "_test.go") {
			copyFile(t, f, filepath.Join(tmp, pkg, f))
		}
	}

	// The flags are the //go:generate line's in doc.go; the package is
	// named from the module root, which gives the same output.
	cmd := exec.Command("go", "tool", "deepcopy-gen", "--output-file", generatedFile, "./"+filepath.ToSlash(pkg))
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}

	got, err := os.ReadFile(filepath.Join(tmp, pkg, generatedFile))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(generatedFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("pkg/api/v1alpha1/%s is out of date: run `go generate ./pkg/api/...`", generatedFile)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
