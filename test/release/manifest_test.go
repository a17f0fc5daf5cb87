// Package release checks krew/captf.yaml, and the release artefacts
// `make release-check` builds. The tests of the artefacts are in the files
// built with the release tag: `make release-check` runs them after the
// snapshot release, with CAPTF_DIST set, and fails if they cannot run.
// `make test` and `go test ./...` do not build them, so nothing skips.
package release

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"sigs.k8s.io/yaml"
)

// manifest reads a krew manifest without the fields a release fills in:
// spec.version and each platform's uri and sha256.
func manifest(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	spec := m["spec"].(map[string]any)
	delete(spec, "version")
	platforms := spec["platforms"].([]any)
	for _, p := range platforms {
		delete(p.(map[string]any), "uri")
		delete(p.(map[string]any), "sha256")
	}
	// The order of platforms means nothing to krew.
	sort.Slice(platforms, func(a, b int) bool { return platformKey(platforms[a]) < platformKey(platforms[b]) })
	return m
}

// The hand-kept manifest follows krew's rules without a build.
func TestKrewManifestShape(t *testing.T) {
	m := manifest(t, filepath.Join("..", "..", "krew", "captf.yaml"))
	if m["metadata"].(map[string]any)["name"] != "captf" {
		t.Error("metadata.name must be captf, the file's name")
	}
	seen := map[string]bool{}
	for _, p := range m["spec"].(map[string]any)["platforms"].([]any) {
		sel := p.(map[string]any)["selector"].(map[string]any)["matchLabels"].(map[string]any)
		key := sel["os"].(string) + "/" + sel["arch"].(string)
		if seen[key] {
			t.Errorf("two platforms match %s", key)
		}
		seen[key] = true
		bin := p.(map[string]any)["bin"]
		if (sel["os"] == "windows") != (bin == "kubectl-captf.exe") {
			t.Errorf("%s: bin %v", key, bin)
		}
	}
	if len(seen) != 6 {
		t.Errorf("%d platforms, want 6", len(seen))
	}
}

func platformKey(p any) string {
	sel := p.(map[string]any)["selector"].(map[string]any)["matchLabels"].(map[string]any)
	return fmt.Sprint(sel["os"], "/", sel["arch"])
}
