package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// AllStale is unlock --all-stale on a cluster of its own (issue 21): the
// command an operator runs after a node loss, against a busy API server.
type AllStale struct {
	Locks, Stale int
	// Locks -A, the dry run and the --confirm, in the table's order.
	Rows []Row
	// Left are the Stale locks locks -A lists after the --confirm.
	Left int
	// BaselineLabel names the build of the rows measured as before.
	BaselineLabel string
}

// Targets of issue 21 for unlock --all-stale.
const (
	targetDryRunRequests = 20  // the dry run: at most 20 requests
	targetDryRunTime     = 2.0 // and at most 2x the time of locks -A
	targetPerLock        = 4.5 // --confirm: at most 4.5 requests a lock
)

// Names of the rows.
const (
	rowStaleLocks   = "allstale-locks"
	rowStaleDryRun  = "allstale-dry-run"
	rowStaleBefore  = "allstale-dry-run-before"
	rowStaleConfirm = "allstale-confirm"
)

// allStale seeds a cluster of c.AllStaleLeases locks, c.AllStaleHeld of
// them held (half of the held Stale), and measures locks -A and the dry
// run side by side, then --confirm once, which clears every Stale lock.
func allStale(ctx context.Context, c Config, plugin string, log io.Writer) (*AllStale, error) {
	sc := c
	// The table's shape: 100 locks a namespace, 3 unrelated pods for
	// every 10 locks.
	sc.Leases, sc.Held, sc.Runs = c.AllStaleLeases, c.AllStaleHeld, c.AllStaleRuns
	sc.Namespaces, sc.Unrelated = max(1, sc.Leases/100), sc.Leases*3/10
	bed, s, _, err := startSeeded(ctx, sc, log)
	if err != nil {
		return nil, err
	}
	defer bed.Stop()
	dir, _, counted, err := env(bed, plugin)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := &AllStale{Locks: sc.Leases, Stale: s.counts[staleGone] + s.counts[staleFailed], BaselineLabel: c.BaselineLabel}
	specs := []cmdSpec{
		{name: rowStaleLocks, shown: "kubectl captf locks -A -o json", env: counted, argv: []string{plugin, "locks", "-A", "-o", "json"}, runs: sc.Runs},
		{name: rowStaleDryRun, shown: "kubectl captf unlock --all-stale -A -o json (dry run)", env: counted, argv: []string{plugin, "unlock", "--all-stale", "-A", "-o", "json"}, runs: sc.Runs},
	}
	if c.Baseline != "" {
		specs = append(specs, cmdSpec{name: rowStaleBefore, shown: "kubectl captf unlock --all-stale -A -o json (dry run), as built at " + c.BaselineLabel,
			env: counted, argv: []string{c.Baseline, "unlock", "--all-stale", "-A", "-o", "json"}, runs: sc.Runs})
	}
	if out.Rows, err = measureAll(ctx, specs, apiserver(bed), log); err != nil {
		return nil, err
	}
	before := cpuOf(apiserver(bed))
	m, err := measure(ctx, counted, plugin, "unlock", "--all-stale", "-A", "--confirm", "-o", "json")
	if err != nil {
		return nil, err
	}
	m.ServerCPU = cpuOf(apiserver(bed)) - before
	fmt.Fprintf(log, "%-20s: %s, %d requests\n", rowStaleConfirm, m.Wall.Round(time.Millisecond), m.Requests)
	out.Rows = append(out.Rows, Row{Name: rowStaleConfirm, Command: "kubectl captf unlock --all-stale -A --confirm -o json", Median: m, Runs: 1})
	cmd := exec.CommandContext(ctx, plugin, "locks", "-A", "--verdict", "Stale", "-o", "json")
	cmd.Env = counted
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("locks -A after --all-stale --confirm: %v", err)
	}
	var list struct{ Items []json.RawMessage }
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, err
	}
	out.Left = len(list.Items)
	return out, nil
}

// markdown renders the section of docs/benchmarks.md.
func (a *AllStale) markdown(kube string) string {
	var b strings.Builder
	row := func(name string) Measurement {
		for _, r := range a.Rows {
			if r.Name == name {
				return r.Median
			}
		}
		return Measurement{}
	}
	locks, dry, confirm := row(rowStaleLocks), row(rowStaleDryRun), row(rowStaleConfirm)
	fmt.Fprintf(&b, "\n### `unlock --all-stale` (issue 21), at %d locks, %d of them Stale (kube-apiserver %s)\n\n", a.Locks, a.Stale, kube)
	fmt.Fprintf(&b, "A fresh cluster of the developers' seed's shape; medians of %d runs of `locks -A` and the dry run, interleaved, then one `--confirm`, which clears every Stale lock.\n\n", a.Rows[0].Runs)
	b.WriteString("| command | wall time | peak memory (RSS) | API requests | CPU | API server CPU |\n|---|---|---|---|---|---|\n")
	for _, r := range a.Rows {
		m := r.Median
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s |\n", r.Command, m.Wall.Round(time.Millisecond), mb(m.PeakKB), m.Requests,
			m.CPU.Round(10*time.Millisecond), m.ServerCPU.Round(10*time.Millisecond))
	}
	if old := row(rowStaleBefore); old.Wall > 0 {
		fmt.Fprintf(&b, "\nThe dry run takes %.2fx the time and %.2fx the requests it took as built at %s.\n",
			ratio(int64(dry.Wall), int64(old.Wall)), ratio(int64(dry.Requests), int64(old.Requests)), a.BaselineLabel)
	}
	perLock := float64(confirm.Requests) / float64(max(a.Stale, 1))
	b.WriteString("\nTargets (issue 21), this run:\n\n")
	fmt.Fprintf(&b, "- the dry run at most %d requests: **%d**, %s.\n", targetDryRunRequests, dry.Requests, verdict(dry.Requests <= targetDryRunRequests))
	fmt.Fprintf(&b, "- the dry run at most %.0fx the time of `locks -A`: **%.2fx**, %s.\n", targetDryRunTime, ratio(int64(dry.Wall), int64(locks.Wall)), verdict(ratio(int64(dry.Wall), int64(locks.Wall)) <= targetDryRunTime))
	fmt.Fprintf(&b, "- `--confirm` at most %.1f requests a lock: **%.2f** (%d requests for %d locks), %s.\n", targetPerLock, perLock, confirm.Requests, a.Stale, verdict(perLock <= targetPerLock))
	fmt.Fprintf(&b, "- no Stale lock left afterwards: **%d left**, %s.\n", a.Left, verdict(a.Left == 0))
	return b.String()
}
