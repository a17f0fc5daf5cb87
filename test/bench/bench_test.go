package bench

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// maxLocksRequests bounds the requests of locks -A, whatever the number of
// locks: one list each of Leases, the three CAPTF kinds and Jobs, at most
// two of pods (a labelled one cut short by a whole one), at most 16 GETs of
// holder pods, and at most 3 reads each (else one list) of the Clusters,
// TerraformClusters and namespaces and 4 of Secrets' metadata for each of
// 3 deleting owners, which the owners' gates read around them
// (pkg/inspect/cluster's holderGets and gateGets).
const maxLocksRequests = 1 + 3 + 1 + 2 + 16 + 3 + 3 + 4*3 + 3

// The benchmark at a small scale: every command runs, and its figures are
// measured, not made up. No figure is compared with a time limit.
func TestBenchmarkSmall(t *testing.T) {
	plugin := filepath.Join(t.TempDir(), "kubectl-captf")
	if out, err := exec.Command("go", "build", "-o", plugin, "github.com/captf-io/kubectl-captf/cmd/kubectl-captf").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	c := Config{Leases: 120, Namespaces: 3, Held: 0.2, Unrelated: 10, Runs: 1, Loop: 4, LoopRuns: 1, Curve: []int{40}, CurveRuns: 1,
		AllStaleLeases: 60, AllStaleHeld: 0.2, AllStaleRuns: 1, NoisyEvents: 50, NoisyRuns: 1, IdleSeed: true}
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
		raw := strings.HasPrefix(r.Name, "raw-")
		if r.Median.Wall <= 0 || (r.Median.PeakKB <= 0) != raw || r.Runs != 1 || (r.Median.Bytes > 0) != raw {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}
	// Requests are bounded by the same constant at any size, and the curve
	// counts them at each point.
	for _, p := range rep.Curve {
		if got := p.Captf.Requests; got < 5 || got > maxLocksRequests {
			t.Errorf("locks -A at %d locks: %d requests, want 5 to %d", p.Locks, got, maxLocksRequests)
		}
		if p.Floor <= 0 || p.Kubectl.PeakKB <= 0 {
			t.Errorf("point %+v", p)
		}
	}
	if len(rep.Curve) != 2 || rep.Curve[0].Locks != 40 || rep.Curve[1].Locks != 120 {
		t.Errorf("curve %+v", rep.Curve)
	}
	// explain: the lock's read (at most 13: pkg/inspect/cluster's
	// maxReadLockRequests), the run lease, the Events about the object,
	// its holder pod and that pod's Job, the state Secrets' names.
	if got := rows[rowExplain].Median.Requests; got < 7 || got > 13+5 {
		t.Errorf("explain: %d requests", got)
	}
	// kubectl's requests are read from its own log: one list, and at
	// least the two GETs per lock of the loop (kubectl adds some of its
	// own, for example around a pod that is not found).
	if got := rows[rowKubectl].Median.Requests; got < 1 || got > 2 {
		t.Errorf("kubectl get leases: %d requests", got)
	}
	if got := rows[rowLoop].Median.Requests; got < 2*c.Loop {
		t.Errorf("loop: %d requests, want at least %d", got, 2*c.Loop)
	}
	// CPU is measured for every command; the API server's is read from
	// /proc as this process's is (a small run may cost it less than a tick).
	if m := rows[rowLocks].Median; m.CPU <= 0 || m.ServerCPU < 0 || m.CPU > 10*m.Wall {
		t.Errorf("locks -A: CPU %s, API server CPU %s, wall %s", m.CPU, m.ServerCPU, m.Wall)
	}
	if own := cpuOf(os.Getpid()); own <= 0 {
		t.Errorf("this process's CPU read from /proc: %s", own)
	}
	// The CAPTF kinds' floor row reads each of the three kinds.
	if got := rows[rowKindsJSON].Median.Requests; got != 3 {
		t.Errorf("raw GETs of the kinds: %d requests, want 3", got)
	}
	// unlock --all-stale on its own cluster: the Stale locks kindOf seeds
	// among the 12 held, all cleared by the --confirm.
	sc := c
	sc.Held = c.AllStaleHeld
	stale := 0
	for i := range c.AllStaleLeases {
		if k := kindOf(i, sc); k == staleGone || k == staleFailed {
			stale++
		}
	}
	if a := rep.AllStale; a == nil || stale == 0 || a.Stale != stale || a.Left != 0 || len(a.Rows) != 3 || a.Rows[2].Median.Requests < stale {
		t.Errorf("all-stale: want %d Stale: %+v", stale, a)
	}
	// explain among unrelated Events: the same requests as without them,
	// with kube-apiserver's Events watch cache off (its default) and on.
	for _, n := range []*Noisy{rep.Noisy, rep.NoisyCached} {
		if n == nil || len(n.Rows) != 2 || n.Rows[0].Median.Requests != n.Rows[1].Median.Requests || n.Rows[1].Median.Wall <= 0 {
			t.Errorf("explain in a noisy namespace: %+v", n)
		}
	}
	if rep.Noisy == nil || rep.NoisyCached == nil || rep.Noisy.Cached || !rep.NoisyCached.Cached {
		t.Errorf("the noisy cases' watch caches: %+v, %+v", rep.Noisy, rep.NoisyCached)
	}
	// The versions are the test-bed's, as its servers report them.
	if !strings.HasPrefix(rep.Kube, "v1.") || !strings.HasPrefix(rep.Kubectl, "v1.") || rep.Noisy == nil || rep.Noisy.Kube != rep.Kube {
		t.Errorf("versions: kube-apiserver %q, kubectl %q", rep.Kube, rep.Kubectl)
	}
	// The idle seed: the same held locks, the headline commands and the
	// kinds' raw GETs measured, and fewer Leases' bytes than the
	// developers' seed, which has a captf-run-* Lease for every lock.
	if i := rep.Idle; i == nil || i.Held != 24 || i.Leases != c.Leases || len(i.Rows) != 5 {
		t.Errorf("idle seed: %+v", i)
	} else {
		for _, r := range i.Rows {
			if r.Median.Wall <= 0 || (r.Median.PeakKB <= 0) != strings.HasPrefix(r.Name, "raw-") {
				t.Errorf("idle seed, %s: %+v", r.Name, r)
			}
		}
		if idle, dev := rowOf(i.Rows, rowLeasesProto).Bytes, rowOf(rep.Rows, rowLeasesProto).Bytes; idle <= 0 || idle >= dev {
			t.Errorf("all Leases: %d bytes on the idle seed, %d on the developers'", idle, dev)
		}
	}
	md := Markdown([]*Report{rep}, time.Now())
	for _, want := range []string{"| kubectl captf locks -A -o json |", "The manual loop takes", "raw GET of all Pods, protobuf", "## Growth curve", "| 40 |", SVGName, "## `unlock --all-stale`", "at most 2x the floor", "the reads the verdicts depend on take", "| API server CPU |", "### `explain` in a noisy namespace", "## Issue 28's targets", "### The idle seed", "with a watch cache for Events", "## kube-apiserver " + rep.Kube + ", kubectl " + rep.Kubectl} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if svg := rep.SVG(); !strings.HasPrefix(svg, "<svg") || strings.Count(svg, "<polyline") != 5 || strings.Contains(svg, "NaN") {
		t.Errorf("svg:\n%s", svg)
	}
}
