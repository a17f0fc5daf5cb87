package cmd

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"strings"
	"syscall"

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

// errGuard ends a command whose output already said that a guard refused.
var errGuard = errors.New("refused by a guard")

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
	case errors.Is(err, errGuard):
		return ExitRefused
	}
	fmt.Fprintf(streams.ErrOut, "error: %s\n", strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " "))
	return ExitError
}
