package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/captf-io/kubectl-captf/pkg/escape"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1
	// ExitRefused: a guard refused, or the lock changed while unlocking.
	ExitRefused = 3
	// ExitFound is `locks --exit-code`'s code when at least one lock is
	// listed: not 0 (nothing found) and not 1 (an error), so that a cron
	// job or a CI step can tell the three apart.
	ExitFound = 4
	// ExitInterrupted is the shell's code for a command ended by Ctrl-C.
	ExitInterrupted = 130
)

// exitCode ends a command whose output already said why, with that code.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit code %d", int(c)) }

// errGuard ends a command whose output already said that a guard refused.
var errGuard = exitCode(ExitRefused)

// warn prints warnings as kubectl does, one line each, escaped: they
// quote what the server and the cluster's objects say. about, when set,
// names what they are about (a context of --contexts).
func warn(w io.Writer, about string, warnings []string) {
	if about != "" {
		about += ": "
	}
	for _, s := range warnings {
		fmt.Fprintf(w, "Warning: %s\n", escape.Text(about+s))
	}
}

// options are a command's options, kubectl's way: Complete fills in what
// the flags leave out (reading the kubeconfig, talking to no server),
// Validate checks the flags without I/O, Run does the work.
type options interface {
	Complete() error
	Validate() error
	Run(context.Context) error
}

func run(ctx context.Context, o options) error {
	if err := o.Complete(); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Run(ctx)
}

// Execute runs the root command and returns the process exit code. Errors
// are printed as kubectl prints them, "error: ..." with the lines of the
// plugin's and cobra's messages; what the cluster wrote into one stays
// escaped on its line (escape.Error).
func Execute(streams genericiooptions.IOStreams, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return execute(ctx, streams, args, nil)
}

// execute runs the command tree on a factory (nil: from the flags).
func execute(ctx context.Context, streams genericiooptions.IOStreams, args []string, f *factory) int {
	root, counter := newRoot(streams, f)
	defer counter.report(streams.ErrOut)
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	err := root.ExecuteContext(ctx)
	switch {
	case ctx.Err() != nil: // Ctrl-C, also ending a watch
		return ExitInterrupted
	case err == nil:
		return ExitOK
	}
	var code exitCode
	if errors.As(err, &code) {
		return int(code)
	}
	fmt.Fprintf(streams.ErrOut, "error: %s\n", escape.Error(err))
	return ExitError
}
