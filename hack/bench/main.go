// Command bench runs the benchmark of docs/benchmarks.md: a fresh test-bed
// seeded with a large management cluster, kubectl captf measured side by
// side with kubectl, against each Kubernetes version -kube names. Flags
// scale it down for a quick look.
//
// docs/benchmarks.md is written whole: the measured sections, then the
// hand-written text of docs/benchmarks-notes.md (how to read the figures,
// what changed and why), which is edited there, never in the output.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/captf-io/kubectl-captf/test/bench"
)

func main() {
	c := bench.Default
	flag.IntVar(&c.Leases, "leases", c.Leases, "lock Leases (one CAPTF object each)")
	flag.IntVar(&c.Namespaces, "namespaces", c.Namespaces, "namespaces")
	flag.IntVar(&c.Unrelated, "unrelated", c.Unrelated, "unrelated pods")
	flag.IntVar(&c.Runs, "runs", c.Runs, "runs of each command")
	flag.IntVar(&c.Loop, "loop", c.Loop, "held locks the manual loop walks")
	flag.IntVar(&c.LoopRuns, "loop-runs", c.LoopRuns, "runs of the manual loop")
	curve := flag.String("curve", joinInts(c.Curve), "other lock counts of the growth curve, comma-separated ('' for none)")
	flag.IntVar(&c.CurveRuns, "curve-runs", c.CurveRuns, "runs of each command at each other point of the curve")
	flag.IntVar(&c.AllStaleLeases, "all-stale-leases", c.AllStaleLeases, "locks of the unlock --all-stale cluster (0 for none)")
	flag.Float64Var(&c.AllStaleHeld, "all-stale-held", c.AllStaleHeld, "the share of them held (half of the held are Stale)")
	flag.IntVar(&c.AllStaleRuns, "all-stale-runs", c.AllStaleRuns, "runs of locks -A and the dry run on that cluster")
	flag.IntVar(&c.NoisyEvents, "noisy-events", c.NoisyEvents, "unrelated Events in the namespace of explain's noisy case (0 for none)")
	flag.IntVar(&c.NoisyRuns, "noisy-runs", c.NoisyRuns, "runs of explain in the quiet and the noisy namespace")
	only := flag.String("only", "", "run one case alone and print its section on stdout: explain-noisy")
	baseline := flag.String("baseline", "", "a git revision to build and run side by side with this tree's build (locks -A and the --all-stale dry run)")
	out := flag.String("out", "docs/benchmarks.md", "where to write the results ('-' for stdout)")
	kube := flag.String("kube", "1.37,1.34", "the test-bed's Kubernetes versions (hack/testbed, CAPTF_KUBE), comma-separated; the growth curve and the --all-stale cluster run against the first only")
	flag.BoolVar(&c.IdleSeed, "idle", c.IdleSeed, "also measure the headline commands on the idle seed (with -serve: serve the idle seed)")
	serve := flag.Bool("serve", false, "only seed a test-bed and keep it running until interrupted, for profiling")
	flag.Parse()
	var err error
	if c.Curve, err = parseInts(*curve); err != nil {
		fmt.Fprintln(os.Stderr, "error: -curve:", err)
		os.Exit(2)
	}
	kubes := strings.Split(*kube, ",")
	if *only != "" {
		if err := runOnly(c, kubes, *only, *baseline); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		return
	}
	if *serve {
		os.Setenv("CAPTF_KUBE", strings.TrimSpace(kubes[0]))
		c.Idle = c.IdleSeed
		if err := serveBed(c); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(c, kubes, *baseline, *out); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// serveBed seeds a test-bed, prints its kubeconfig and waits for SIGINT or
// SIGTERM.
func serveBed(c bench.Config) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bed, err := bench.Serve(ctx, c, os.Stderr)
	if err != nil {
		return err
	}
	defer bed.Stop()
	fmt.Printf("KUBECONFIG=%s\n", bed.Kubeconfig)
	<-ctx.Done()
	return nil
}

// runOnly runs one case alone, for a quick measure of it without the
// whole benchmark, and prints its section of docs/benchmarks.md.
func runOnly(c bench.Config, kubes []string, name, baseline string) error {
	if name != "explain-noisy" {
		return fmt.Errorf("-only %q: the cases are explain-noisy", name)
	}
	dir, err := os.MkdirTemp("", "captf-bench-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	plugin, err := buildPlugin(dir)
	if err != nil {
		return err
	}
	if baseline != "" {
		if c.Baseline, c.BaselineLabel, err = buildAt(baseline, dir); err != nil {
			return err
		}
	}
	for _, k := range kubes {
		os.Setenv("CAPTF_KUBE", strings.TrimSpace(k))
		md, err := bench.RunNoisy(context.Background(), c, plugin, os.Stderr)
		if err != nil {
			return err
		}
		if _, err := fmt.Print(md); err != nil {
			return err
		}
	}
	return nil
}

// releaseBuild builds the plugin as a release does (.goreleaser.yaml:
// CGO_ENABLED=0, stripped), and as hack/testbed builds the kubectl it is
// compared with. A default build links with cgo and, since cli-runtime's
// resource builder pulls in kustomize, which imports "plugin", exports
// every symbol dynamically: measured on the idle seed, 145 MB of peak
// memory for locks -A against 113 MB for the release build, and 65 MB
// against 39 MB for --help.
func releaseBuild(out, dir string) *exec.Cmd {
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, "./cmd/kubectl-captf")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}

// buildPlugin builds this tree's plugin into dir.
func buildPlugin(dir string) (string, error) {
	plugin := filepath.Join(dir, "kubectl-captf")
	if b, err := releaseBuild(plugin, "").CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the plugin: %v\n%s", err, b)
	}
	return plugin, nil
}

// notesName is the hand-written part of docs/benchmarks.md, next to it.
const notesName = "benchmarks-notes.md"

func run(c bench.Config, kubes []string, baseline, out string) error {
	docs := filepath.Dir(out)
	if out == "-" {
		docs = "docs"
	}
	notes, err := os.ReadFile(filepath.Join(docs, notesName))
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "captf-bench-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	plugin, err := buildPlugin(dir)
	if err != nil {
		return err
	}
	if baseline != "" {
		if c.Baseline, c.BaselineLabel, err = buildAt(baseline, dir); err != nil {
			return err
		}
	}
	var reps []*bench.Report
	for i, k := range kubes {
		kc := c
		if i > 0 {
			kc.Curve, kc.AllStaleLeases = nil, 0
		}
		os.Setenv("CAPTF_KUBE", strings.TrimSpace(k))
		rep, err := bench.Run(context.Background(), kc, plugin, os.Stderr)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	md := "# Benchmarks\n\n" + bench.Markdown(reps, time.Now()) + "\n" + strings.TrimLeft(string(notes), "\n")
	if out == "-" {
		_, err = fmt.Print(md)
		return err
	}
	if len(reps[0].Curve) > 1 {
		if err := os.WriteFile(filepath.Join(docs, bench.SVGName), []byte(reps[0].SVG()), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(out, []byte(md), 0o644)
}

// buildAt builds the plugin as it was at a git revision, in a worktree of
// its own, and returns the binary and the revision's short hash.
func buildAt(rev, dir string) (bin, label string, err error) {
	b, err := exec.Command("git", "rev-parse", "--short", rev+"^{commit}").Output()
	if err != nil {
		return "", "", fmt.Errorf("-baseline %s: not a revision: %v", rev, err)
	}
	label = strings.TrimSpace(string(b))
	tree := filepath.Join(dir, "baseline")
	if b, err := exec.Command("git", "worktree", "add", "--detach", tree, label).CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("-baseline %s: %v\n%s", rev, err, b)
	}
	defer exec.Command("git", "worktree", "remove", "--force", tree).Run()
	bin = filepath.Join(dir, "kubectl-captf-"+label)
	if b, err := releaseBuild(bin, tree).CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("building the plugin at %s: %v\n%s", label, err, b)
	}
	return bin, label, nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a number of locks", f)
		}
		out = append(out, n)
	}
	return out, nil
}
