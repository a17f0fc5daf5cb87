// Package release checks the release artefacts `make release-check` builds.
package release

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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

// krew/captf.yaml, the manifest for krew-index, says what goreleaser
// generates. Run by `make release-check`, which sets CAPTF_DIST.
func TestKrewManifestMatchesGoreleaser(t *testing.T) {
	dist := os.Getenv("CAPTF_DIST")
	if dist == "" {
		t.Skip("CAPTF_DIST is not set: run `make release-check`")
	}
	want := manifest(t, filepath.Join("..", "..", dist, "krew", "captf.yaml"))
	got := manifest(t, filepath.Join("..", "..", "krew", "captf.yaml"))
	if !reflect.DeepEqual(got, want) {
		gb, _ := yaml.Marshal(got)
		wb, _ := yaml.Marshal(want)
		t.Errorf("krew/captf.yaml differs from goreleaser's manifest:\n--- krew/captf.yaml\n%s\n--- generated\n%s", gb, wb)
	}
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
