//go:build release

package release

import (
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

// krew/captf.yaml, the manifest for krew-index, says what goreleaser
// generates.
func TestKrewManifestMatchesGoreleaser(t *testing.T) {
	dist := fromEnv(t, "CAPTF_DIST")
	want := manifest(t, filepath.Join("..", "..", dist, "krew", "captf.yaml"))
	got := manifest(t, filepath.Join("..", "..", "krew", "captf.yaml"))
	if !reflect.DeepEqual(got, want) {
		gb, _ := yaml.Marshal(got)
		wb, _ := yaml.Marshal(want)
		t.Errorf("krew/captf.yaml differs from goreleaser's manifest:\n--- krew/captf.yaml\n%s\n--- generated\n%s", gb, wb)
	}
}
