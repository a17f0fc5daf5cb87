package main

import (
	"bytes"
	"os"
	"path/filepath"
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
