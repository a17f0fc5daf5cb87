//go:build release

package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every release archive holds what the README, docs/k9s.md and the krew
// caveat promise, with the modes an install needs: the binary, LICENSE,
// the completion shim of its platform, and the k9s plugins file as it is
// in the repository, so that installing it needs no clone.
func TestArchivesHoldTheK9sFileAndTheShim(t *testing.T) {
	dist := filepath.Join("..", "..", fromEnv(t, "CAPTF_DIST"))
	k9sFile, err := os.ReadFile(filepath.Join("..", "..", "docs", "k9s", "captf.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	archives, _ := filepath.Glob(filepath.Join(dist, "kubectl-captf_*.tar.gz"))
	if len(archives) != 6 {
		t.Fatalf("%d archives in %s, want one for each of the 6 platforms: %v", len(archives), dist, archives)
	}
	for _, a := range archives {
		windows := strings.Contains(filepath.Base(a), "_windows_")
		want := map[string]string{"LICENSE": "0644", "docs/k9s/captf.yaml": "0644"}
		if windows {
			want["kubectl-captf.exe"], want["kubectl_complete-captf.cmd"] = "0755", "0755"
		} else {
			want["kubectl-captf"], want["kubectl_complete-captf"] = "0755", "0755"
		}
		got := map[string]string{}
		var k9s []byte
		f, err := os.Open(a)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", a, err)
			}
			if h.Typeflag != tar.TypeReg {
				continue
			}
			got[h.Name] = fmt.Sprintf("%04o", h.Mode&0o777)
			if h.Name == "docs/k9s/captf.yaml" {
				if k9s, err = io.ReadAll(tr); err != nil {
					t.Fatal(err)
				}
			}
		}
		f.Close()
		if !maps.Equal(got, want) {
			t.Errorf("%s holds %v (files and modes), want %v", filepath.Base(a), got, want)
		}
		if !bytes.Equal(k9s, k9sFile) {
			t.Errorf("%s: docs/k9s/captf.yaml is not the repository's", filepath.Base(a))
		}
	}
}
