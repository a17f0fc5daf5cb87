package cmd

import (
	"os"
	"testing"
)

// docs/usage.md is generated from the commands; regenerate it with
// `go run ./hack/docs` when a flag or help text changes.
func TestUsageDocIsUpToDate(t *testing.T) {
	want, err := os.ReadFile("../../docs/usage.md")
	if err != nil {
		t.Fatal(err)
	}
	if got := UsageMarkdown(); got != string(want) {
		t.Fatal("docs/usage.md is out of date: run `go run ./hack/docs`")
	}
}
