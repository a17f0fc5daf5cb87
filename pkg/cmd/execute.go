package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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
	// ExitFound is `locks --exit-code`'s code when at least one lock is
	// listed: not 0 (nothing found) and not 1 (an error), so that a cron
	// job or a CI step can tell the three apart.
	ExitFound = 4
	// ExitInterrupted is the shell's code for a command ended by Ctrl-C
	// (SIGINT): 128 + the signal's number, as for every signal in
	// interrupts.
	ExitInterrupted = 130
)

// interrupts are the signals that end a run as Ctrl-C does: the context
// is cancelled, so that what is in flight ends cleanly, and a write begun
// is finished and put on record (report line and Event) before the run
// stops. SIGHUP comes with a closed terminal or a dropped ssh session,
// SIGTERM from kill and from a pod's termination, SIGQUIT from Ctrl-\;
// left to Go's defaults they would end the process at once, between a
// write and its record (SIGQUIT with a dump of every goroutine). The exit
// code is the shell's for each: 128 + its number (129, 130, 131, 143).
var interrupts = []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM}

// interrupted is the cause of a run's context cancelled by a signal.
type interrupted struct{ sig syscall.Signal }

func (i interrupted) Error() string { return "interrupted by " + i.sig.String() }

// exitFor is the exit code of a run whose context ended with cause:
// 128 + the signal's number, ExitInterrupted for a context cancelled
// otherwise (as Ctrl-C would).
func exitFor(cause error) int {
	var i interrupted
	if errors.As(cause, &i) {
		return 128 + int(i.sig)
	}
	return ExitInterrupted
}

// notifyContext is signal.NotifyContext for interrupts, keeping which
// signal came as the context's cause. Signals after the first are taken
// and ignored until stop, so that a second Ctrl-C does not kill the run
// while it finishes the record of a write.
func notifyContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, interrupts...)
	go func() {
		select {
		case s := <-ch:
			sig, _ := s.(syscall.Signal)
			cancel(interrupted{sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

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
		fmt.Fprintf(w, "Warning: %s\n", escape.Cell(about+s, proseColumns))
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
		return &commandError{err}
	}
	if err := o.Validate(); err != nil {
		return &commandError{err}
	}
	if err := o.Run(ctx); err != nil {
		return &commandError{err}
	}
	return nil
}

// commandError is an error a command returned once it ran. Its text may
// quote anything the cluster, a library or a kubeconfig wrote (a response
// body in a decoder's error, a kind from discovery), and none of the
// plugin's own messages spans lines, so it is printed escaped whole, on
// one line. Only cobra's own errors, which come before a command runs,
// keep their lines (escape.Error).
type commandError struct{ err error }

func (e *commandError) Error() string { return e.err.Error() }
func (e *commandError) Unwrap() error { return e.err }

// Execute runs the root command and returns the process exit code. Errors
// are printed as kubectl prints them, "error: ...": a command's error
// escaped whole on one line, cobra's own with its lines (printError).
func Execute(streams genericiooptions.IOStreams, args []string) int {
	ctx, stop := notifyContext(context.Background())
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
	case ctx.Err() != nil: // Ctrl-C or another of interrupts, also ending a watch
		// An error other than the interrupt itself (a write whose answer
		// was lost, an unlock not on record) is still said.
		var code exitCode
		if err != nil && !errors.As(err, &code) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			printError(streams.ErrOut, err)
		}
		return exitFor(context.Cause(ctx))
	case err == nil:
		return ExitOK
	}
	var code exitCode
	if errors.As(err, &code) {
		return int(code)
	}
	printError(streams.ErrOut, err)
	return ExitError
}

// printError prints err as kubectl does, after "error:": the lines of the
// plugin's and cobra's own messages kept, whatever the cluster wrote
// escaped on its line (escape.Error), and no URL's password
// (withoutPasswords).
func printError(w io.Writer, err error) {
	var ran *commandError
	if errors.As(err, &ran) {
		// The server's message is cluster text: escaped, and bounded
		// (review-prose m6), its passwords out before any cut.
		fmt.Fprintf(w, "error: %s\n", escape.Cell(withoutPasswords(strings.TrimSpace(err.Error())), proseColumns))
		return
	}
	fmt.Fprintf(w, "error: %s\n", withoutPasswords(escape.Error(err)))
}
