package bench

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"time"
)

// Targets of issue 14, at the table's number of locks.
const (
	targetFloor   = 2.0 // locks -A at most 2x the floor
	targetKubectl = 0.2 // at most 0.2x kubectl's time
	targetMemory  = 0.5 // at most 0.5x kubectl's peak memory
	targetGrowth  = 3.0 // peak memory from 10,000 to 50,000 locks: less than 3x
)

// Targets of issue 21 for locks -A, at the table's number of locks.
const (
	targetReads = 1.5 // at most 1.5x the raw reads its verdicts depend on, one after the other
	// targetBefore bounds the time against the build before the change:
	// the library JSON decoder replaced a hand-written splitter if it kept
	// locks -A within 1.2x.
	targetBefore = 1.2
	// memoryNoise is how much more peak memory than before still counts
	// as not grown: a Go process's RSS varies by a few MB between runs.
	memoryNoise = 1.05
)

// SVGName is the plot of the growth curve, next to docs/benchmarks.md.
const SVGName = "benchmarks-growth.svg"

func (r *Report) row(name string) Measurement { return rowOf(r.Rows, name) }

func rowOf(rows []Row, name string) Measurement {
	for _, x := range rows {
		if x.Name == name {
			return x.Median
		}
	}
	return Measurement{}
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

func mb(kb int64) string {
	if kb == 0 {
		return "—"
	}
	return fmt.Sprintf("%d MB", kb/1024)
}

// machine names the CPU, for the record.
func machine() string {
	name := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				name = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d cores of an %s (%s/%s, %s)", runtime.NumCPU(), name, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// Markdown renders the reports of one benchmark, one for each
// kube-apiserver it ran against, for docs/benchmarks.md: issue 28's
// targets side by side, then each version's tables.
func Markdown(reps []*Report, when time.Time) string {
	var b strings.Builder
	var vs []string
	for _, r := range reps {
		vs = append(vs, "kube-apiserver "+r.Kube+" with kubectl "+r.Kubectl)
	}
	fmt.Fprintf(&b, "Measured %s on %s, with `go run ./hack/bench` (`make bench`), against %s, each a fresh test-bed "+
		"(etcd and kube-apiserver on 127.0.0.1) built by hack/testbed, and the kubectl built beside it.\n",
		when.UTC().Format("2006-01-02 15:04 MST"), machine(), strings.Join(vs, ", then "))
	b.WriteString(sideBySide(reps))
	for _, r := range reps {
		b.WriteString(r.section())
	}
	return b.String()
}

// sideBySide is issue 28's table: each target on each version.
func sideBySide(reps []*Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Issue 28's targets, every version side by side, this run\n\n| target, at %d locks |", reps[0].Config.Leases)
	sep := "|---|"
	for _, r := range reps {
		fmt.Fprintf(&b, " kube-apiserver %s |", r.Kube)
		sep += "---|"
	}
	b.WriteString("\n" + sep + "\n")
	line := func(name string, cell func(*Report) string) {
		b.WriteString("| " + name + " |")
		for _, r := range reps {
			b.WriteString(" " + cell(r) + " |")
		}
		b.WriteString("\n")
	}
	for _, seed := range []struct {
		name  string
		table func(*Report) []Row
	}{
		{"the developers' seed", func(r *Report) []Row { return r.Rows }},
		{"the idle seed", func(r *Report) []Row {
			if r.Idle == nil {
				return nil
			}
			return r.Idle.Rows
		}},
	} {
		cell := func(f func(rows []Row) string) func(*Report) string {
			return func(r *Report) string {
				if rows := seed.table(r); rowOf(rows, rowLocks).Wall > 0 {
					return f(rows)
				}
				return "not run"
			}
		}
		line(fmt.Sprintf("`locks -A` at most %.1fx the raw reads its verdicts depend on, %s", targetReads, seed.name), cell(func(rows []Row) string {
			locks, reads := rowOf(rows, rowLocks).Wall, readsOf(rows)
			x := ratio(int64(locks), int64(reads))
			return fmt.Sprintf("**%.2fx** (%s against %s), %s", x, locks.Round(time.Millisecond), reads.Round(time.Millisecond), verdict(x <= targetReads))
		}))
		line(fmt.Sprintf("`locks -A` at most %.1fx the time of `kubectl get leases -A -o json`, %s", targetKubectl, seed.name), cell(func(rows []Row) string {
			locks, kube := rowOf(rows, rowLocks).Wall, rowOf(rows, rowKubectl).Wall
			x := ratio(int64(locks), int64(kube))
			return fmt.Sprintf("**%.2fx** (%s against %s), %s", x, locks.Round(time.Millisecond), kube.Round(time.Millisecond), verdict(x <= targetKubectl))
		}))
		line(fmt.Sprintf("`locks -A` peak memory at most %.1fx kubectl's, %s", targetMemory, seed.name), cell(func(rows []Row) string {
			locks, kube := rowOf(rows, rowLocks).PeakKB, rowOf(rows, rowKubectl).PeakKB
			x := ratio(locks, kube)
			return fmt.Sprintf("**%.2fx** (%s against %s), %s", x, mb(locks), mb(kube), verdict(x <= targetMemory))
		}))
	}
	for _, cached := range []bool{false, true} {
		name := fmt.Sprintf("`explain` with %d unrelated Events in its namespace at most %.1fx its time without them, ", reps[0].Config.NoisyEvents, targetNoisy)
		if cached {
			name += "kube-apiserver with a watch cache for Events"
		} else {
			name += "kube-apiserver as it starts by default (no watch cache for Events)"
		}
		line(name, func(r *Report) string {
			n := r.Noisy
			if cached {
				n = r.NoisyCached
			}
			if n == nil {
				return "not run"
			}
			x := n.ratio()
			return fmt.Sprintf("**%.2fx** (%s against %s), %s", x, n.Rows[1].Median.Wall.Round(time.Millisecond), n.Rows[0].Median.Wall.Round(time.Millisecond), verdict(x <= targetNoisy))
		})
	}
	return b.String()
}

// readsOf is the raw reads the verdicts depend on, one after the other:
// Leases and Pods in protobuf, the three CAPTF kinds in JSON.
func readsOf(rows []Row) time.Duration {
	return rowOf(rows, rowLeasesProto).Wall + rowOf(rows, rowPodsProto).Wall + rowOf(rows, rowKindsJSON).Wall
}

// table renders rows, with each command's time and memory against
// kubectl's list of the same Leases.
func table(rows []Row) string {
	var b strings.Builder
	kube := rowOf(rows, rowKubectl)
	b.WriteString("| command | wall time | peak memory (RSS) | API requests | CPU | API server CPU | time vs kubectl | memory vs kubectl |\n|---|---|---|---|---|---|---|---|\n")
	for _, x := range rows {
		m := x.Median
		mem := "—"
		if m.PeakKB > 0 {
			mem = fmt.Sprintf("%.2f", ratio(m.PeakKB, kube.PeakKB))
		}
		cmd := x.Command
		if m.Bytes > 0 {
			cmd += fmt.Sprintf(", %.1f MB", float64(m.Bytes)/(1<<20))
		}
		cpu := "—"
		if m.CPU > 0 {
			cpu = m.CPU.Round(10 * time.Millisecond).String()
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %.2f | %s |\n", cmd, m.Wall.Round(time.Millisecond), mb(m.PeakKB), m.Requests,
			cpu, m.ServerCPU.Round(10*time.Millisecond), ratio(int64(m.Wall), int64(kube.Wall)), mem)
	}
	return b.String()
}

// section renders one version's tables.
func (r *Report) section() string {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "\n## kube-apiserver %s, kubectl %s\n", r.Kube, r.Kubectl)
	fmt.Fprintf(&b, "\n### The developers' seed, %d locks (kube-apiserver %s)\n\n", c.Leases, r.Kube)
	fmt.Fprintf(&b, "A fresh test-bed seeded with %d lock Leases in %d namespaces, "+
		"%d of them held (stale with the pod gone or Failed, live, foreign, unknown), the matching CAPTF objects and `captf-run-*` leases "+
		"(so %d Leases in all), runner pods in several phases and %d unrelated pods; seeding took %s. "+
		"Medians of %d runs (%d for the loop), interleaved.\n\n",
		c.Leases, c.Namespaces, r.Held, 2*c.Leases, c.Unrelated, r.Seeding.Round(time.Second), c.Runs, c.LoopRuns)
	b.WriteString(table(r.Rows))

	kube, locks := r.row(rowKubectl), r.row(rowLocks)
	floor := r.row(rowLeasesProto).Wall + r.row(rowPodsProto).Wall
	loop, explain := r.row(rowLoop), r.row(rowExplain)
	if loop.Wall > 0 {
		fmt.Fprintf(&b, "\nThe manual loop takes %.0fx the wall time of `locks -A` (which classifies all %d locks) and %.0fx that of `explain`.\n",
			ratio(int64(loop.Wall), int64(locks.Wall)), c.Leases, ratio(int64(loop.Wall), int64(explain.Wall)))
	}

	fmt.Fprintf(&b, "\n#### Targets (issue 14), at %d locks, this run\n\n", c.Leases)
	fmt.Fprintf(&b, "- `locks -A -o json` at most %.0fx the floor (raw Leases + raw Pods, protobuf: %s): **%.2fx**, %s.\n",
		targetFloor, floor.Round(time.Millisecond), ratio(int64(locks.Wall), int64(floor)), verdict(ratio(int64(locks.Wall), int64(floor)) <= targetFloor))
	fmt.Fprintf(&b, "- at most %.1fx the time of `kubectl get leases -A -o json`: **%.2fx**, %s.\n",
		targetKubectl, ratio(int64(locks.Wall), int64(kube.Wall)), verdict(ratio(int64(locks.Wall), int64(kube.Wall)) <= targetKubectl))
	fmt.Fprintf(&b, "- peak memory at most %.1fx kubectl's: **%.2fx**, %s.\n",
		targetMemory, ratio(locks.PeakKB, kube.PeakKB), verdict(ratio(locks.PeakKB, kube.PeakKB) <= targetMemory))
	if g, ok := r.growth(c.Leases, 5*c.Leases); ok {
		fmt.Fprintf(&b, "- peak memory from %d to %d locks grows less than %.0fx: **%.2fx**, %s.\n", c.Leases, 5*c.Leases, targetGrowth, g, verdict(g < targetGrowth))
	}
	if kinds := r.row(rowKindsJSON).Wall; kinds > 0 {
		all := floor + kinds
		fmt.Fprintf(&b, "\nNot a target, for reading the first one: the floor leaves out the CAPTF objects, which the verdicts need "+
			"(whose lock a suffix is, and, for a Stale lock, the gates that decide whether CAPTF clears it), and which the API server "+
			"serves as JSON only. With the raw GETs of the three kinds added (%s), the reads the verdicts depend on take %s one after "+
			"the other; `locks -A -o json`, which overlaps them, takes **%.2fx** that.\n",
			kinds.Round(time.Millisecond), all.Round(time.Millisecond), ratio(int64(locks.Wall), int64(all)))
	}

	if kinds := r.row(rowKindsJSON).Wall; kinds > 0 {
		reads := floor + kinds
		fmt.Fprintf(&b, "\n#### Targets (issue 21), at %d locks, this run\n\n", c.Leases)
		fmt.Fprintf(&b, "- `locks -A -o json` at most %.1fx the raw reads its verdicts depend on, one after the other (Leases and Pods in protobuf, the three kinds in JSON: %s): **%.2fx**, %s.\n",
			targetReads, reads.Round(time.Millisecond), ratio(int64(locks.Wall), int64(reads)), verdict(ratio(int64(locks.Wall), int64(reads)) <= targetReads))
		fmt.Fprintf(&b, "- at most %.1fx the time of `kubectl get leases -A -o json`: **%.2fx**, %s.\n",
			targetKubectl, ratio(int64(locks.Wall), int64(kube.Wall)), verdict(ratio(int64(locks.Wall), int64(kube.Wall)) <= targetKubectl))
		if old := r.row(rowLocksBefore); old.Wall > 0 {
			fmt.Fprintf(&b, "- against the build at %s, side by side: time at most %.1fx: **%.2fx** (%s against %s), %s; peak memory not grown (within %.0f%%%%, the noise of RSS): **%.2fx** (%s against %s), %s; requests %d against %d.\n",
				c.BaselineLabel, targetBefore, ratio(int64(locks.Wall), int64(old.Wall)), locks.Wall.Round(time.Millisecond), old.Wall.Round(time.Millisecond),
				verdict(ratio(int64(locks.Wall), int64(old.Wall)) <= targetBefore),
				(memoryNoise-1)*100, ratio(locks.PeakKB, old.PeakKB), mb(locks.PeakKB), mb(old.PeakKB), verdict(ratio(locks.PeakKB, old.PeakKB) <= memoryNoise),
				locks.Requests, old.Requests)
		}
		if g, ok := r.growth(c.Leases, 5*c.Leases); ok {
			fmt.Fprintf(&b, "- peak memory from %d to %d locks grows less than %.0fx: **%.2fx**, %s.\n", c.Leases, 5*c.Leases, targetGrowth, g, verdict(g < targetGrowth))
		}
	}

	if t := r.Idle; t != nil {
		fmt.Fprintf(&b, "\n### The idle seed, %d locks (kube-apiserver %s)\n\n", t.Leases, r.Kube)
		fmt.Fprintf(&b, "A fresh test-bed seeded as real CAPTF leaves a management cluster between runs: %d lock Leases in %d namespaces, "+
			"each with CAPTF's labels and its CAPTF object, %d of them held as in the developers' seed; the other %d locked once and released "+
			"as the kubernetes backend releases them (no holderIdentity, no lock-info annotation); no `captf-run-*` Leases, which CAPTF deletes "+
			"once it has recorded a run, and no finished runner pods. So %d of the %d Leases hold no lock and carry no lock info. "+
			"%d unrelated pods; seeding took %s. Medians of %d runs, interleaved.\n\n",
			t.Leases, c.Namespaces, t.Held, t.Leases-t.Held, t.Leases-t.Held, t.Leases, c.Unrelated, t.Seeding.Round(time.Second), c.Runs)
		b.WriteString(table(t.Rows))
	}

	if len(r.Curve) > 1 {
		fmt.Fprintf(&b, "\n### Growth curve (kube-apiserver %s)\n\n", r.Kube)
		fmt.Fprintf(&b, "Each point is a fresh cluster of the developers' seed's shape (20%% held, unrelated pods in proportion); medians of %d runs "+
			"(of %d at %d locks). The floor is the raw GETs of all Leases and all Pods in protobuf.\n\n", c.CurveRuns, c.Runs, c.Leases)
		b.WriteString("| locks | `locks -A` time | `locks -A` memory | `locks -A` requests | floor | `locks -A` vs floor | kubectl time | kubectl memory | kubectl requests |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, p := range r.Curve {
			fmt.Fprintf(&b, "| %d | %s | %s | %d | %s | %.2fx | %s | %s | %d |\n", p.Locks,
				p.Captf.Wall.Round(time.Millisecond), mb(p.Captf.PeakKB), p.Captf.Requests, p.Floor.Round(time.Millisecond),
				ratio(int64(p.Captf.Wall), int64(p.Floor)), p.Kubectl.Wall.Round(time.Millisecond), mb(p.Kubectl.PeakKB), p.Kubectl.Requests)
		}
		fmt.Fprintf(&b, "\n![Growth curve: wall time and peak memory of locks -A, the floor and kubectl](%s)\n", SVGName)
	}

	if r.AllStale != nil {
		b.WriteString(r.AllStale.markdown(r.Kube))
	}
	if r.Noisy != nil {
		b.WriteString(r.Noisy.markdown())
	}
	if r.NoisyCached != nil {
		b.WriteString(r.NoisyCached.markdown())
	}
	return b.String()
}

// growth is the ratio of locks -A's peak memory at to and at from locks.
func (r *Report) growth(from, to int) (float64, bool) {
	var a, b int64
	for _, p := range r.Curve {
		switch p.Locks {
		case from:
			a = p.Captf.PeakKB
		case to:
			b = p.Captf.PeakKB
		}
	}
	return ratio(b, a), a > 0 && b > 0
}

// SVG plots the growth curve: wall time and peak memory against the
// number of locks (on a log scale), for locks -A, the floor and kubectl.
func (r *Report) SVG() string {
	const w, h, pad, gap = 360, 260, 50, 40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", 2*w+gap+2*pad, h+2*pad+30)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	type series struct {
		name, color string
		y           func(Point) float64
	}
	panel := func(x0 int, title, unit string, ss []series) {
		lo, hi := math.Log10(float64(r.Curve[0].Locks)), math.Log10(float64(r.Curve[len(r.Curve)-1].Locks))
		if hi == lo {
			hi = lo + 1
		}
		top := 0.0
		for _, s := range ss {
			for _, p := range r.Curve {
				top = math.Max(top, s.y(p))
			}
		}
		if top == 0 {
			top = 1
		}
		top *= 1.1
		px := func(n int) float64 { return float64(x0) + (math.Log10(float64(n))-lo)/(hi-lo)*w }
		py := func(v float64) float64 { return float64(pad+h) - v/top*h }
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>`+"\n", x0, pad-20, title)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", x0, pad+h, x0+w, pad+h)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", x0, pad, x0, pad+h)
		for i := 0; i <= 4; i++ {
			v := top / 1.1 * float64(i) / 4
			fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", x0, py(v), x0+w, py(v))
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%.3g %s</text>`+"\n", x0-4, py(v)+4, v, unit)
		}
		for _, p := range r.Curve {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", px(p.Locks), pad+h+16, p.Locks)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">locks (log scale)</text>`+"\n", x0+w/2, pad+h+32)
		for i, s := range ss {
			var pts []string
			for _, p := range r.Curve {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p.Locks), py(s.y(p))))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", s.color, strings.Join(pts, " "))
			for _, p := range r.Curve {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", px(p.Locks), py(s.y(p)), s.color)
			}
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
				x0+10, pad+4+14*i, s.color, x0+24, pad+13+14*i, s.name)
		}
	}
	sec := func(d time.Duration) float64 { return d.Seconds() }
	panel(pad, "Wall time", "s", []series{
		{"kubectl get leases -A -o json", "#d62728", func(p Point) float64 { return sec(p.Kubectl.Wall) }},
		{"kubectl captf locks -A -o json", "#1f77b4", func(p Point) float64 { return sec(p.Captf.Wall) }},
		{"floor: raw Leases + Pods, protobuf", "#2ca02c", func(p Point) float64 { return sec(p.Floor) }},
	})
	panel(pad+w+gap+pad, "Peak memory (RSS)", "MB", []series{
		{"kubectl get leases -A -o json", "#d62728", func(p Point) float64 { return float64(p.Kubectl.PeakKB) / 1024 }},
		{"kubectl captf locks -A -o json", "#1f77b4", func(p Point) float64 { return float64(p.Captf.PeakKB) / 1024 }},
	})
	b.WriteString("</svg>\n")
	return b.String()
}
