package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"
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
	// ExitInterrupted is the shell's code for a command ended by Ctrl-C.
	ExitInterrupted = 130
)

// exitCode ends a command whose output already said why, with that code.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit code %d", int(c)) }

// errGuard ends a command whose output already said that a guard refused.
var errGuard = exitCode(ExitRefused)

// warn prints warnings as kubectl does, one line each, escaped: they
// quote what the server and the cluster's objects say.
func warn(w io.Writer, warnings []string) {
	for _, s := range warnings {
		fmt.Fprintf(w, "Warning: %s\n", escape.Text(s))
	}
}

// Execute runs the root command and returns the process exit code. Errors
// are printed as kubectl prints them: one line, "error: ...".
func Execute(streams genericiooptions.IOStreams, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	root, counter := newRoot(streams)
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
	fmt.Fprintf(streams.ErrOut, "error: %s\n", escape.Text(strings.TrimSpace(err.Error())))
	return ExitError
}
