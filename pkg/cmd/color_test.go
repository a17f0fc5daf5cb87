package cmd

import (
	"strings"
	"testing"
)

// --color always closes each verdict's colour once, right after it: no
// stray reset stands before the next cell.
func TestColorLeavesNoStrayReset(t *testing.T) {
	got := render(t, tableOptions{color: true})
	if opened, closed := strings.Count(got, "\x1b[3"), strings.Count(got, "\x1b[0m"); opened == 0 || opened != closed ||
		!strings.Contains(got, "\x1b[33mStale\x1b[0m      root@") {
		t.Errorf("%d colours opened, %d resets:\n%q", opened, closed, got)
	}
}
