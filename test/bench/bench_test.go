package bench

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The benchmark at a small scale: every command runs, and its figures are
// measured, not made up. No figure is compared with a time limit.
func TestBenchmarkSmall(t *testing.T) {
	plugin := filepath.Join(t.TempDir(), "kubectl-captf")
	if out, err := exec.Command("go", "build", "-o", plugin, "github.com/captf-io/kubectl-captf/cmd/kubectl-captf").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	c := Config{Leases: 120, Namespaces: 3, Held: 0.2, Unrelated: 10, Runs: 1, Loop: 4, LoopRuns: 1}
	rep, err := Run(context.Background(), c, plugin, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Held != 24 {
		t.Errorf("%d held locks, want 24", rep.Held)
	}
	rows := map[string]Row{}
	for _, r := range rep.Rows {
		rows[r.Name] = r
		if r.Median.Wall <= 0 || r.Median.PeakKB <= 0 || r.Runs != 1 {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}
	// The stale locks whose pods are gone are read by name (up to 16):
	// 6 lists and one GET each; their owners' gates cost at most 3 more
	// requests, however many they are.
	gone := 0
	for i := 0; i < c.Leases; i++ {
		if kindOf(i, c) == staleGone {
			gone++
		}
	}
	if got := rows["locks"].Median.Requests; gone > 16 || got < 6+gone || got > 6+gone+3 {
		t.Errorf("locks: %d requests, want %d to %d", got, 6+gone, 6+gone+3)
	}
	if got := rows["explain"].Median.Requests; got < 7 || got > 10 {
		t.Errorf("explain: %d requests", got)
	}
	// kubectl's requests are read from its own log: one list, and at
	// least the two GETs per lock of the loop (kubectl adds some of its
	// own, for example around a pod that is not found).
	if got := rows["leases"].Median.Requests; got != 1 {
		t.Errorf("kubectl get leases: %d requests", got)
	}
	if got := rows["loop"].Median.Requests; got < 2*c.Loop {
		t.Errorf("loop: %d requests, want at least %d", got, 2*c.Loop)
	}
	md := rep.Markdown(time.Now())
	if !strings.Contains(md, "| kubectl captf locks -A -o json |") || !strings.Contains(md, "The manual loop takes") {
		t.Errorf("report:\n%s", md)
	}
}
