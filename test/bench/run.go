package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	PeakKB   int64 // 0 for a raw GET, which is no command
	Requests int
	Bytes    int64 // read, for a raw GET
	// CPU is the command's own CPU time (user and system; 0 for a raw
	// GET), ServerCPU the API server's during the run: on a machine of
	// few cores their sum, not the wire, bounds the wall time.
	CPU, ServerCPU time.Duration
}

// Row is one command's medians.
type Row struct {
	Name    string
	Command string
	Median  Measurement
	Runs    int
}

// Report is a whole benchmark against one kube-apiserver.
type Report struct {
	Config Config
	// Kube and Kubectl are the versions of the test-bed's kube-apiserver,
	// as it reports itself, and of the kubectl built beside it.
	Kube, Kubectl string
	Held          int
	Seeding       time.Duration
	// Rows are the table at Config.Leases locks.
	Rows []Row
	// Idle is the headline table on the idle seed (Config.Idle).
	Idle *Table
	// Curve has a point for Config.Leases and each of Config.Curve.
	Curve []Point
	// AllStale is unlock --all-stale on a cluster of its own.
	AllStale *AllStale
	// Noisy is explain among many unrelated Events, on a cluster of its
	// own; NoisyCached the same on a cluster whose kube-apiserver keeps a
	// watch cache for Events.
	Noisy, NoisyCached *Noisy
}

// Table is one seeded cluster's rows.
type Table struct {
	Held, Leases int // held locks, and all Leases
	Seeding      time.Duration
	Rows         []Row
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
		m.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
		Wall:      time.Duration(pick(func(m Measurement) int64 { return int64(m.Wall) })),
		PeakKB:    pick(func(m Measurement) int64 { return m.PeakKB }),
		Requests:  int(pick(func(m Measurement) int64 { return int64(m.Requests) })),
		Bytes:     pick(func(m Measurement) int64 { return m.Bytes }),
		CPU:       time.Duration(pick(func(m Measurement) int64 { return int64(m.CPU) })),
		ServerCPU: time.Duration(pick(func(m Measurement) int64 { return int64(m.ServerCPU) })),
	}
}

// Run measures the cluster (c.Leases locks) side by side with
// kubectl and the floor, then each size of c.Curve on a fresh cluster of
// its own, for the growth curve. plugin is the built kubectl-captf binary.
// The test-bed is the one CAPTF_KUBE names (testbed.Binaries), and kubectl
// the one built beside its kube-apiserver, whatever PATH holds.
func Run(ctx context.Context, c Config, plugin string, log io.Writer) (*Report, error) {
	rep := &Report{Config: c}
	bins, err := testbed.Binaries(ctx)
	if err != nil {
		return nil, err
	}
	kubectl := filepath.Join(testbed.PathDir(bins), "kubectl")
	if rep.Kubectl, err = kubectlVersion(ctx, kubectl); err != nil {
		return nil, err
	}
	if err := rep.main(ctx, c, plugin, kubectl, log); err != nil {
		return nil, err
	}
	if c.IdleSeed {
		if rep.Idle, err = idleTable(ctx, c, plugin, kubectl, log); err != nil {
			return nil, err
		}
	}
	for _, n := range c.Curve {
		p, err := curvePoint(ctx, c.scaled(n), plugin, kubectl, log)
		if err != nil {
			return nil, err
		}
		rep.Curve = append(rep.Curve, p)
	}
	sort.Slice(rep.Curve, func(a, b int) bool { return rep.Curve[a].Locks < rep.Curve[b].Locks })
	if c.AllStaleLeases > 0 {
		if rep.AllStale, err = allStale(ctx, c, plugin, log); err != nil {
			return nil, err
		}
	}
	if c.NoisyEvents > 0 {
		if rep.Noisy, rep.NoisyCached, err = noisyBoth(ctx, c, plugin, log); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// kubectlVersion is kubectl's own version.
func kubectlVersion(ctx context.Context, kubectl string) (string, error) {
	b, err := exec.CommandContext(ctx, kubectl, "version", "--client", "-o", "json").Output()
	if err != nil {
		return "", fmt.Errorf("%s version: %v", kubectl, err)
	}
	var v struct {
		ClientVersion struct{ GitVersion string } `json:"clientVersion"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.ClientVersion.GitVersion == "" {
		return "", fmt.Errorf("%s version: no client version in %q", kubectl, b)
	}
	return v.ClientVersion.GitVersion, nil
}

// serverVersion is the version the test-bed's kube-apiserver reports.
func serverVersion(bed *testbed.Cluster) (string, error) {
	cs, err := bed.Clients()
	if err != nil {
		return "", err
	}
	v, err := cs.Kube.Discovery().ServerVersion()
	if err != nil {
		return "", err
	}
	return v.GitVersion, nil
}

// RunNoisy measures explain in a noisy namespace alone (Noisy), with the
// Events watch cache off and on, and returns its section of
// docs/benchmarks.md.
func RunNoisy(ctx context.Context, c Config, plugin string, log io.Writer) (string, error) {
	n, cached, err := noisyBoth(ctx, c, plugin, log)
	if err != nil {
		return "", err
	}
	return n.markdown() + cached.markdown(), nil
}

// scaled is the configuration of a curve point of n locks: the same
// shape, with unrelated pods in the same proportion.
func (c Config) scaled(n int) Config {
	s := c
	s.Leases, s.Unrelated, s.Runs = n, c.Unrelated*n/c.Leases, c.CurveRuns
	return s
}

// cmdSpec is one command the benchmark runs.
type cmdSpec struct {
	name, shown string
	env         []string
	argv        []string
	runs        int
	raw         *rawList // a raw GET instead of a command
}

// Names of the rows.
const (
	rowLocks       = "locks"
	rowLocksBefore = "locks-before"
	rowKubectl     = "leases"
	rowExplain     = "explain"
	rowLoop        = "loop"
	rowLeasesJSON  = "raw-leases-json"
	rowLeasesProto = "raw-leases-protobuf"
	rowPodsProto   = "raw-pods-protobuf"
	rowKindsJSON   = "raw-kinds-json"
)

// env is the environment of every command of one cluster: kubectl finds
// the plugin on PATH, and all share one warm discovery cache in dir, a new
// temporary HOME the caller removes.
func env(bed *testbed.Cluster, plugin string) (dir string, plain, counted []string, err error) {
	if dir, err = os.MkdirTemp("", "captf-bench-"); err != nil {
		return "", nil, nil, err
	}
	plain = append(os.Environ(), "KUBECONFIG="+bed.Kubeconfig, "HOME="+dir, "NO_COLOR=1",
		"PATH="+filepath.Dir(plugin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir, plain, append(plain[:len(plain):len(plain)], "KUBECTL_CAPTF_COUNT_REQUESTS=1"), nil
}

// headline are the commands of both the table and the curve: locks -A,
// kubectl's list of the same Leases, and the floor.
func headline(bed *testbed.Cluster, plugin, kubectl string, plain, counted []string, runs int) []cmdSpec {
	return []cmdSpec{
		{name: rowLocks, shown: "kubectl captf locks -A -o json", env: counted, argv: []string{plugin, "locks", "-A", "-o", "json"}, runs: runs},
		{name: rowKubectl, shown: "kubectl get leases -A -o json", env: plain, argv: []string{kubectl, "get", "leases", "-A", "-o", "json", "-v=6"}, runs: runs},
		{name: rowLeasesProto, shown: "raw GET of all Leases, protobuf (not decoded)", raw: &rawList{bed: bed, paths: []string{"/apis/coordination.k8s.io/v1/leases"}, accept: protobufType}, runs: runs},
		{name: rowPodsProto, shown: "raw GET of all Pods, protobuf (not decoded)", raw: &rawList{bed: bed, paths: []string{"/api/v1/pods"}, accept: protobufType}, runs: runs},
	}
}

const kindsShown = "raw GETs of all objects of the three CAPTF kinds, JSON (not decoded), one after the other"

// kindPaths lists every object of each CAPTF kind: JSON only, as the API
// server serves custom resources, and in full, as locks -A reads them when
// the gates of more than a few owners decide their verdicts' reasons.
func kindPaths() []string {
	var out []string
	for _, k := range object.Kinds {
		gvr := k.GVR()
		out = append(out, "/apis/"+gvr.Group+"/"+gvr.Version+"/"+gvr.Resource)
	}
	return out
}

// main measures the table at c.Leases locks.
func (rep *Report) main(ctx context.Context, c Config, plugin, kubectl string, log io.Writer) error {
	bed, s, seeding, err := startSeeded(ctx, c, log)
	if err != nil {
		return err
	}
	defer bed.Stop()
	rep.Held, rep.Seeding = len(s.held), seeding
	if rep.Kube, err = serverVersion(bed); err != nil {
		return err
	}
	dir, plain, counted, err := env(bed, plugin)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	loop := filepath.Join(dir, "runbook.sh")
	if err := writeLoop(loop, kubectl, s.held, c.Loop); err != nil {
		return err
	}
	specs := headline(bed, plugin, kubectl, plain, counted, c.Runs)
	if c.Baseline != "" {
		specs = append(specs, cmdSpec{name: rowLocksBefore, shown: "kubectl captf locks -A -o json, as built at " + c.BaselineLabel,
			env: counted, argv: []string{c.Baseline, "locks", "-A", "-o", "json"}, runs: c.Runs})
	}
	specs = append(specs,
		cmdSpec{name: rowKindsJSON, shown: kindsShown, raw: &rawList{bed: bed, paths: kindPaths(), accept: "application/json"}, runs: c.Runs},
		cmdSpec{name: rowLeasesJSON, shown: "raw GET of all Leases, JSON (not decoded)", raw: &rawList{bed: bed, paths: []string{"/apis/coordination.k8s.io/v1/leases"}, accept: "application/json"}, runs: c.Runs},
		cmdSpec{name: rowExplain, shown: "kubectl captf explain " + s.explain.String() + " -n " + s.explain.Namespace, env: counted, argv: []string{plugin, "explain", s.explain.String(), "-n", s.explain.Namespace, "-o", "json"}, runs: c.Runs},
		cmdSpec{name: rowLoop, shown: fmt.Sprintf("manual runbook: kubectl get lease, then kubectl get pod, for %d held locks", min(c.Loop, len(s.held))), env: plain, argv: []string{"bash", loop}, runs: c.LoopRuns},
	)
	if rep.Rows, err = measureAll(ctx, specs, apiserver(bed), log); err != nil {
		return err
	}
	rep.Curve = append(rep.Curve, pointOf(c.Leases, rep.Rows))
	return nil
}

// curvePoint measures the headline commands on a fresh cluster.
func curvePoint(ctx context.Context, c Config, plugin, kubectl string, log io.Writer) (Point, error) {
	bed, _, _, err := startSeeded(ctx, c, log)
	if err != nil {
		return Point{}, err
	}
	defer bed.Stop()
	dir, plain, counted, err := env(bed, plugin)
	if err != nil {
		return Point{}, err
	}
	defer os.RemoveAll(dir)
	rows, err := measureAll(ctx, headline(bed, plugin, kubectl, plain, counted, c.Runs), apiserver(bed), log)
	if err != nil {
		return Point{}, err
	}
	return pointOf(c.Leases, rows), nil
}

// idleTable measures the headline commands and the CAPTF kinds' raw GETs
// on a fresh cluster of the idle seed (Config.Idle), at c.Leases locks.
func idleTable(ctx context.Context, c Config, plugin, kubectl string, log io.Writer) (*Table, error) {
	ic := c
	ic.Idle = true
	bed, s, seeding, err := startSeeded(ctx, ic, log)
	if err != nil {
		return nil, err
	}
	defer bed.Stop()
	dir, plain, counted, err := env(bed, plugin)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	specs := append(headline(bed, plugin, kubectl, plain, counted, c.Runs),
		cmdSpec{name: rowKindsJSON, shown: kindsShown, raw: &rawList{bed: bed, paths: kindPaths(), accept: "application/json"}, runs: c.Runs})
	rows, err := measureAll(ctx, specs, apiserver(bed), log)
	if err != nil {
		return nil, err
	}
	return &Table{Held: len(s.held), Leases: c.Leases, Seeding: seeding, Rows: rows}, nil
}

// apiserver is the test-bed's kube-apiserver process.
func apiserver(bed *testbed.Cluster) int {
	pids := bed.PIDs()
	return pids[len(pids)-1]
}

// clockTick is the unit of /proc's CPU times: USER_HZ, 100 on Linux.
const clockTick = 10 * time.Millisecond

// cpuOf is a process's CPU time so far (user and system), from
// /proc/<pid>/stat; 0 when it cannot be read.
func cpuOf(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, field 2, is in parentheses and may hold spaces
	// and parentheses: the fields after it follow the last ")".
	end := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[end+1:]))
	if end < 0 || len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64) // fields 14 and 15 of stat
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * clockTick
}

// measureAll runs every spec, interleaved run by run so that the machine's
// noise falls on all of them alike, after one unmeasured run of each
// (which warms the discovery cache and the server).
func measureAll(ctx context.Context, specs []cmdSpec, server int, log io.Writer) ([]Row, error) {
	one := func(sp cmdSpec) (Measurement, error) {
		before := cpuOf(server)
		var m Measurement
		var err error
		if sp.raw != nil {
			m, err = sp.raw.get(ctx)
		} else {
			m, err = measure(ctx, sp.env, sp.argv[0], sp.argv[1:]...)
		}
		m.ServerCPU = cpuOf(server) - before
		return m, err
	}
	for _, sp := range specs {
		if sp.name == rowLoop {
			continue
		}
		if _, err := one(sp); err != nil {
			return nil, err
		}
	}
	results := make([][]Measurement, len(specs))
	for run := 0; ; run++ {
		more := false
		for i, sp := range specs {
			if run >= sp.runs {
				continue
			}
			more = true
			m, err := one(sp)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(log, "%-20s run %d: %s, %d MB, %d requests, CPU %s, API server CPU %s\n", sp.name, run+1, m.Wall.Round(time.Millisecond),
				m.PeakKB/1024, m.Requests, m.CPU.Round(time.Millisecond), m.ServerCPU.Round(time.Millisecond))
			results[i] = append(results[i], m)
		}
		if !more {
			break
		}
	}
	rows := make([]Row, len(specs))
	for i, sp := range specs {
		rows[i] = Row{Name: sp.name, Command: sp.shown, Median: median(results[i]), Runs: len(results[i])}
	}
	return rows, nil
}

// Serve starts a fresh test-bed seeded as the benchmark's and returns it
// running, for profiling by hand; the caller stops it.
func Serve(ctx context.Context, c Config, log io.Writer) (*testbed.Cluster, error) {
	bed, _, _, err := startSeeded(ctx, c, log)
	return bed, err
}

// startSeeded starts a fresh test-bed and seeds it.
func startSeeded(ctx context.Context, c Config, log io.Writer) (*testbed.Cluster, *seeded, time.Duration, error) {
	shape := "the developers' seed"
	if c.Idle {
		shape = "the idle seed"
	}
	bed, err := testbed.Start(ctx, testbed.Options{})
	if err != nil {
		return nil, nil, 0, err
	}
	cs, err := bed.Clients()
	if err != nil {
		bed.Stop()
		return nil, nil, 0, err
	}
	fmt.Fprintf(log, "seeding %d locks in %d namespaces, %s...\n", c.Leases, c.Namespaces, shape)
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
