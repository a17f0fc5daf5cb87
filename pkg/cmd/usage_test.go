package cmd

import (
	"os"
	"strings"
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

// docs/usage.md's summary names every exit code, 4 included.
func TestUsageSummarisesEveryExitCode(t *testing.T) {
	md := UsageMarkdown()
	for _, c := range []string{"0 success", "1 error", "3 refused", "4 at least one lock listed (locks --exit-code)", "130 interrupted"} {
		if !strings.Contains(md, c) {
			t.Errorf("docs/usage.md's exit codes lack %q", c)
		}
	}
}
