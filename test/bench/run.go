package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// Measurement is one run of one command.
type Measurement struct {
	Wall     time.Duration
	PeakKB   int64
	Requests int
}

// Row is one command's medians.
type Row struct {
	Name    string
	Command string
	Median  Measurement
	Runs    int
}

// Report is a whole benchmark.
type Report struct {
	Config  Config
	Held    int
	Seeding time.Duration
	Rows    []Row
}

var (
	captfRequests = regexp.MustCompile(`captf-requests: (\d+)`)
	// kubectl's -v=6 response lines, in client-go's older and newer forms.
	kubectlRequest = regexp.MustCompile(`round_trippers\.go:\d+\] (?:"Response" verb=|(?:GET|POST|PUT|PATCH|DELETE) https?://)`)
)

// measure runs a command once. Requests are counted, never estimated: the
// plugin's own counting transport, or kubectl's -v=6 log of each response.
func measure(ctx context.Context, env []string, name string, args ...string) (Measurement, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var errb bytes.Buffer
	cmd.Env, cmd.Stdout, cmd.Stderr = env, io.Discard, &errb
	start := time.Now()
	err := cmd.Run()
	m := Measurement{Wall: time.Since(start)}
	if err != nil {
		return m, fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, tail(errb.String()))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.PeakKB = ru.Maxrss // kilobytes on Linux
	}
	if c := captfRequests.FindStringSubmatch(errb.String()); c != nil {
		m.Requests, _ = strconv.Atoi(c[1])
	} else {
		m.Requests = len(kubectlRequest.FindAllString(errb.String(), -1))
	}
	return m, nil
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

// median of each field over the runs.
func median(ms []Measurement) Measurement {
	pick := func(get func(Measurement) int64) int64 {
		v := make([]int64, len(ms))
		for i, m := range ms {
			v[i] = get(m)
		}
		sort.Slice(v, func(a, b int) bool { return v[a] < v[b] })
		return v[len(v)/2]
	}
	return Measurement{
		Wall:     time.Duration(pick(func(m Measurement) int64 { return int64(m.Wall) })),
		PeakKB:   pick(func(m Measurement) int64 { return m.PeakKB }),
		Requests: int(pick(func(m Measurement) int64 { return int64(m.Requests) })),
	}
}

// Run starts a fresh test-bed, seeds it, and measures the commands side by
// side, interleaved run by run so that the machine's noise falls on all of
// them alike. plugin is the built kubectl-captf binary.
func Run(ctx context.Context, c Config, plugin string, log io.Writer) (*Report, error) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		return nil, fmt.Errorf("the benchmark compares with kubectl, which is not on PATH")
	}
	bed, s, seeding, err := startSeeded(ctx, c, log)
	if err != nil {
		return nil, err
	}
	defer bed.Stop()
	rep := &Report{Config: c, Held: len(s.held), Seeding: seeding}

	dir, err := os.MkdirTemp("", "captf-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// kubectl finds the plugin on PATH; all share one warm discovery cache.
	env := append(os.Environ(), "KUBECONFIG="+bed.Kubeconfig, "HOME="+dir, "NO_COLOR=1",
		"PATH="+filepath.Dir(plugin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	counted := append(env[:len(env):len(env)], "KUBECTL_CAPTF_COUNT_REQUESTS=1")
	loop := filepath.Join(dir, "runbook.sh")
	if err := writeLoop(loop, kubectl, s.held, c.Loop); err != nil {
		return nil, err
	}
	type cmdSpec struct {
		name, shown string
		env         []string
		argv        []string
		runs        int
	}
	specs := []cmdSpec{
		{"locks", "kubectl captf locks -A -o json", counted, []string{plugin, "locks", "-A", "-o", "json"}, c.Runs},
		{"leases", "kubectl get leases -A -l tfstate=true -o json", env, []string{kubectl, "get", "leases", "-A", "-l", "tfstate=true", "-o", "json", "-v=6"}, c.Runs},
		{"explain", "kubectl captf explain " + s.explain.String() + " -n " + s.explain.Namespace, counted, []string{plugin, "explain", s.explain.String(), "-n", s.explain.Namespace, "-o", "json"}, c.Runs},
		{"loop", fmt.Sprintf("manual runbook: kubectl get lease, then kubectl get pod, for %d held locks", min(c.Loop, len(s.held))), env, []string{"bash", loop}, c.LoopRuns},
	}
	// One unmeasured run each warms the discovery cache and the server.
	for _, sp := range specs[:3] {
		if _, err := measure(ctx, sp.env, sp.argv[0], sp.argv[1:]...); err != nil {
			return nil, err
		}
	}
	results := make([][]Measurement, len(specs))
	for run := 0; run < c.Runs; run++ {
		for i, sp := range specs {
			if run >= sp.runs {
				continue
			}
			m, err := measure(ctx, sp.env, sp.argv[0], sp.argv[1:]...)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(log, "%-8s run %d: %s, %d MB, %d requests\n", sp.name, run+1, m.Wall.Round(time.Millisecond), m.PeakKB/1024, m.Requests)
			results[i] = append(results[i], m)
		}
	}
	for i, sp := range specs {
		rep.Rows = append(rep.Rows, Row{Name: sp.name, Command: sp.shown, Median: median(results[i]), Runs: len(results[i])})
	}
	return rep, nil
}

// Serve starts a fresh test-bed seeded as the benchmark's and returns it
// running, for profiling by hand; the caller stops it.
func Serve(ctx context.Context, c Config, log io.Writer) (*testbed.Cluster, error) {
	bed, _, _, err := startSeeded(ctx, c, log)
	return bed, err
}

// startSeeded starts a fresh test-bed and seeds it.
func startSeeded(ctx context.Context, c Config, log io.Writer) (*testbed.Cluster, *seeded, time.Duration, error) {
	bed, err := testbed.Start(ctx, testbed.Options{})
	if err != nil {
		return nil, nil, 0, err
	}
	cs, err := bed.Clients()
	if err != nil {
		bed.Stop()
		return nil, nil, 0, err
	}
	fmt.Fprintf(log, "seeding %d locks in %d namespaces...\n", c.Leases, c.Namespaces)
	start := time.Now()
	s, err := seed(ctx, cs, c)
	if err != nil {
		bed.Stop()
		return nil, nil, 0, err
	}
	fmt.Fprintf(log, "seeded in %s\n", time.Since(start).Round(time.Second))
	return bed, s, time.Since(start), nil
}

// writeLoop writes the runbook an operator follows by hand today: read
// each held Lease, then the pod its holder names.
func writeLoop(path, kubectl string, held []heldLock, n int) error {
	var b strings.Builder
	b.WriteString("#!/usr/bin/env bash\nset -u\n")
	for i, h := range held {
		if i == n {
			break
		}
		lease := object.LockLeaseName("default", h.ref.Suffix())
		fmt.Fprintf(&b, "%s get lease -n %s %s -o json -v=6 >/dev/null\n", kubectl, h.ref.Namespace, lease)
		fmt.Fprintf(&b, "%s get pod -n %s %s -o json -v=6 >/dev/null || true\n", kubectl, h.ref.Namespace, h.host)
	}
	return os.WriteFile(path, []byte(b.String()), 0o755)
}

// Markdown renders the report for docs/benchmarks.md.
func (r *Report) Markdown(when time.Time) string {
	var b strings.Builder
	row := map[string]Row{}
	for _, x := range r.Rows {
		row[x.Name] = x
	}
	base := row["leases"].Median
	fmt.Fprintf(&b, "Measured %s on %d cores (%s/%s, %s), with `go run ./hack/bench` (`make bench`).\n\n",
		when.UTC().Format("2006-01-02"), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(&b, "Cluster: a fresh test-bed (etcd and kube-apiserver on 127.0.0.1) seeded with %d lock Leases in %d namespaces, "+
		"%d of them held (stale with the pod gone or Failed, live, foreign, unknown), the matching CAPTF objects and `captf-run-*` leases, "+
		"runner pods in several phases and %d unrelated pods; seeding took %s. Medians of %d runs (%d for the loop), interleaved.\n\n",
		r.Config.Leases, r.Config.Namespaces, r.Held, r.Config.Unrelated, r.Seeding.Round(time.Second), r.Config.Runs, r.Config.LoopRuns)
	b.WriteString("| command | wall time | peak memory | API requests | time vs `get leases` | memory vs `get leases` |\n|---|---|---|---|---|---|\n")
	for _, x := range r.Rows {
		m := x.Median
		fmt.Fprintf(&b, "| %s | %s | %d MB | %d | %.2f | %.2f |\n", x.Command, m.Wall.Round(time.Millisecond), m.PeakKB/1024, m.Requests,
			float64(m.Wall)/float64(base.Wall), float64(m.PeakKB)/float64(base.PeakKB))
	}
	loop, locks, explain := row["loop"].Median, row["locks"].Median, row["explain"].Median
	fmt.Fprintf(&b, "\nThe manual loop takes %.0fx the wall time of `locks -A` (which classifies all %d locks) and %.0fx that of `explain`.\n",
		float64(loop.Wall)/float64(locks.Wall), r.Config.Leases, float64(loop.Wall)/float64(explain.Wall))
	return b.String()
}
