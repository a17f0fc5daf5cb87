package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/schema is generated from pkg/api/v1alpha1; regenerate it with
// `go run ./hack/schema` when an output type changes.
func TestSchemasAreUpToDate(t *testing.T) {
	files, err := generate(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range schemaFiles {
		want, err := os.ReadFile(filepath.Join("..", "..", "docs", "schema", f.file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(files[f.file], want) {
			t.Errorf("docs/schema/%s is out of date: run `go run ./hack/schema`", f.file)
		}
	}
}

// Each $id resolves to the file itself: the raw URL of docs/schema/<file>
// on the main branch of the repository go.mod names, the path the
// generator writes it to.
func TestSchemaIDsAreTheServedFiles(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	module := strings.TrimPrefix(strings.SplitN(string(mod), "\n", 2)[0], "module ")
	repo, ok := strings.CutPrefix(module, "github.com/")
	if !ok {
		t.Fatalf("go.mod's module %q is not on GitHub", module)
	}
	for _, f := range schemaFiles {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", "schema", f.file))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			ID string `json:"$id"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		if want := "https://raw.githubusercontent.com/" + repo + "/main/docs/schema/" + f.file; doc.ID != want {
			t.Errorf("docs/schema/%s: $id %q, want %q, where the file is served", f.file, doc.ID, want)
		}
	}
}
