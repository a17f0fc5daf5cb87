// Command profile runs one kubectl-captf command in-process under Go's
// profilers, for `go tool pprof`: the benchmark says how long a command
// takes and how much memory it holds, the profile says where. Point
// KUBECONFIG at a cluster (`go run ./hack/bench -serve` seeds one) and
// give the command's arguments after the flags:
//
//	go run ./hack/bench/profile -cpu cpu.pprof -allocs allocs.pprof -- locks -A -o json
//	go run ./hack/bench/profile -trace trace.out -- locks -A -o json
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"syscall"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/captf-io/kubectl-captf/pkg/cmd"
)

func main() {
	cpu := flag.String("cpu", "", "write a CPU profile here")
	allocs := flag.String("allocs", "", "write an allocation profile here")
	runs := flag.Int("runs", 1, "runs of the command (the profiles cover all)")
	tr := flag.String("trace", "", "write an execution trace here, for `go tool trace` (where a run waits)")
	flag.Parse()
	if err := run(*cpu, *allocs, *tr, *runs, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(cpu, allocs, tr string, runs int, args []string) error {
	if tr != "" {
		f, err := os.Create(tr)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			return err
		}
		defer trace.Stop()
	}
	if cpu != "" {
		f, err := os.Create(cpu)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: io.Discard, ErrOut: os.Stderr}
	for n := 0; n < runs; n++ {
		start := time.Now()
		if code := cmd.Execute(streams, args); code != 0 {
			return fmt.Errorf("exit status %d", code)
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		fmt.Fprintf(os.Stderr, "run %d: %s, %d MB allocated in total, %d GCs, peak RSS %d MB\n",
			n+1, time.Since(start).Round(time.Millisecond), ms.TotalAlloc>>20, ms.NumGC, ru.Maxrss>>10)
	}
	if allocs != "" {
		f, err := os.Create(allocs)
		if err != nil {
			return err
		}
		defer f.Close()
		return pprof.Lookup("allocs").WriteTo(f, 0)
	}
	return nil
}
