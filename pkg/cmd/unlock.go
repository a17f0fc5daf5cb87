package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/captf-io/kubectl-captf/pkg/advice"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/audit"
	"github.com/captf-io/kubectl-captf/pkg/escape"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/unlock"
)

const unlockExample = `  # What would happen (a dry run: nothing is written)
  kubectl captf unlock terraformcluster/demo -n infra

  # Clear a stale lock
  kubectl captf unlock terraformcluster/demo -n infra --confirm

  # Clear a lock held from a workstation, once its holder is gone, naming its ID
  kubectl captf unlock terraformmachine/web-1 -n infra --id 3c1e9a5b-7d2f-0e4a-8b6c-1f2e3d4c5b6a --confirm

  # Clear a live runner's lock, naming the lock ID you saw in the dry run
  kubectl captf unlock terraformcluster/edge -n team-a --force --id 6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d --confirm

  # Clear every stale lock in every namespace
  kubectl captf unlock --all-stale -A --confirm`

const unlockLong = `Clear a Terraform/OpenTofu state lock of a CAPTF object, safely.

Without --confirm it is a dry run: it prints the lock, its verdict and exactly
what would be written, and writes nothing. With --confirm it reads the Lease
and the holder pod again, live, classifies the lock again and then:

  Unlocked, no Lease  says so, writes nothing.
  Stale               unlocks: any stale own-pod holder is safe to clear by
                      CAPTF's own rule, checked again at write time.
  Live                refuses, unless --force with --id naming the current
                      lock ID: clearing a live runner's lock lets two runs
                      write the same state.
  Foreign, Unknown    refuses, unless --id names the current lock ID (the
                      proof terraform force-unlock asks for). A foreign holder
                      may be mid-write.

An --id that differs from the current lock ID is always refused, and the
refusal names the holder that has the lock now. A refusal prints the command
that would go ahead, with the current lock ID.

What the write guarantees: it is the runtimes' own Unlock (spec.holderIdentity
set to null, only the app.terraform.io/lock-info annotation removed), sent as
an update carrying the resourceVersion that --confirm read just before it, so
the server refuses it (Conflict, exit 3) if the Lease changed in between. What
it does not: it cannot pin what an earlier dry run or listing showed; that is
what --id is for. And it does not stop a holder that is still running: the
runtimes do not fence state writes with the lock. An Event (reason
OperatorForceUnlocked) records the unlock. When it cannot be created, the lock
is cleared all the same, but the command fails (exit 1) and --all-stale clears
nothing more: no write follows one that is not on record.

With --all-stale each lock's outcome is printed as it happens (json and yaml
print them all at the end, also after a failure or Ctrl-C): Unlocked,
AlreadyUnlocked (the Lease vanished or was released meanwhile), Refused,
Conflict or Failed.

An interrupt (Ctrl-C; SIGHUP from a closed terminal or a dropped ssh session;
SIGTERM; SIGQUIT) ends the run after the lock in hand: a write already sent
is finished, reported and recorded, and nothing after it is written.

Exit codes: the worst outcome. 0 done (or, in a dry run, would be done, or
nothing to unlock), 1 an error, a lock failed or an unlock not recorded, 3
refused by a guard or the lock changed while unlocking, 128 + the signal when
interrupted (130 Ctrl-C, 129 SIGHUP, 131 SIGQUIT, 143 SIGTERM).`

// UnlockOptions are the options of `kubectl captf unlock`.
type UnlockOptions struct {
	factory *factory
	print   *printFlags

	Confirm       bool
	Force         bool
	ID            string
	idGiven       bool
	AllStale      bool
	AllNamespaces bool
	Reconcile     bool

	args      []string
	namespace string
	printer   printers.ResourcePrinter
	unlocker  *unlock.Unlocker
	// stdout is Out, checked: its first write error.
	stdout *checkedWriter
	genericiooptions.IOStreams
}

// NewUnlockOptions are the options with their defaults.
func NewUnlockOptions(f *factory, streams genericiooptions.IOStreams) *UnlockOptions {
	o := &UnlockOptions{factory: f, IOStreams: streams}
	o.print = newPrintFlags(func(bool) printers.ResourcePrinter { return &outcomePrinter{now: f.clock} }, "json", "yaml", "name")
	o.print.asName = func(obj runtime.Object) []runtime.Object {
		if p, ok := obj.(*printedOutcome); ok && (p.Action == v1alpha1.ActionUnlocked || p.Action == v1alpha1.WouldUnlock) {
			return []runtime.Object{leaseName(p.Namespace, p.Lease)}
		}
		return nil
	}
	return o
}

// NewCmdUnlock is `kubectl captf unlock`.
func NewCmdUnlock(f *factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewUnlockOptions(f, streams)
	cmd := &cobra.Command{
		Use:               "unlock (TYPE/NAME | TYPE NAME | lease/NAME | --all-stale) [--confirm]",
		Short:             "Clear a state lock, refusing live holders and locks that changed",
		Long:              unlockLong,
		Example:           unlockExample,
		ValidArgsFunction: completeTargets(f),
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.AllStale && len(args) > 0:
				return errors.New("name a lock or give --all-stale, not both")
			case o.AllStale:
				return nil
			}
			return targetArgs("name the lock to clear (TYPE/NAME or lease/NAME), or give --all-stale")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.args, o.idGiven = args, cmd.Flags().Changed("id")
			return run(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.Confirm, "confirm", false, "Write. Without it, print what would be written and write nothing.")
	fl.BoolVar(&o.Force, "force", false, "Clear a lock whose holder is one of the object's own runner pods and still alive; needs --id.")
	fl.StringVar(&o.ID, "id", "", "The current lock ID: required to clear a Live (with --force), Foreign or Unknown lock, and checked against any lock.")
	fl.BoolVar(&o.AllStale, "all-stale", false, "Clear every Stale lock in the namespace (or with -A, everywhere), and nothing else.")
	fl.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "With --all-stale, every namespace.")
	fl.BoolVar(&o.Reconcile, "reconcile", false, "After unlocking, annotate the object with "+advice.ReconcileAnnotation+" so CAPTF's controller reconciles now (it does not watch Leases).")
	o.print.addFlags(cmd)
	return cmd
}

// Complete reads the namespace and builds the clients and the printer.
func (o *UnlockOptions) Complete() error {
	var err error
	if o.namespace, o.printer, err = o.factory.complete(o.print, o.AllNamespaces); err != nil {
		return err
	}
	c, err := o.factory.Clients()
	if err != nil {
		return err
	}
	b := o.factory.advice()
	o.unlocker = &unlock.Unlocker{Reader: c.reader, Client: c.kube, Dynamic: c.dynamic, Advice: b, Impersonated: c.impersonated, Now: o.factory.clock}
	return nil
}

// Validate checks that the flags make one clear request.
func (o *UnlockOptions) Validate() error {
	switch {
	case o.AllStale && (o.Force || o.idGiven):
		return errors.New("--all-stale clears only Stale locks: --force and --id name one lock")
	case o.AllNamespaces && !o.AllStale:
		return errors.New("-A goes with --all-stale")
	}
	return nil
}

// Run unlocks and prints. Each lock's outcome is printed as it happens,
// so that what was cleared is on record whatever comes after it: a lock
// that fails, or an interrupt. The exit code is the worst outcome: 128 +
// the signal when interrupted, 1 when any failed or an unlock is not on
// record (then --all-stale stops), 3 when any was refused or conflicted.
func (o *UnlockOptions) Run(ctx context.Context) error {
	o.stdout = &checkedWriter{w: o.Out}
	o.Out = o.stdout
	if o.Confirm {
		// A reader of stdout that exits early (| head) must not kill the
		// process between a write and its record: the write fails with
		// EPIPE instead, and the record goes to stderr.
		signal.Ignore(syscall.SIGPIPE)
	}
	opts := unlock.Options{
		Guard:   unlock.Guard{Force: o.Force, ID: o.ID, IDGiven: o.idGiven},
		Confirm: o.Confirm, Reconcile: o.Reconcile,
	}
	if !o.AllStale {
		t, err := resolveTargetUntil(ctx, o.factory, o.namespace, o.args)
		if err != nil {
			return err
		}
		opts.Arg = t.Arg
		out, err := o.unlocker.Unlock(ctx, t.Namespace, t.Lease, opts)
		if err != nil {
			return err
		}
		o.settle(ctx, out, opts)
		return o.finish([]*unlock.Outcome{out}, ctx)
	}
	// The candidates come from one read of the scope; each is decided
	// again, just before its write, from its Lease and holder pod read
	// again (UnlockIn), and a dry run reads nothing more.
	snap, err := o.unlocker.Reader.Read(ctx, inspect.Scope{Namespace: o.namespace})
	if err != nil {
		return err
	}
	rep := inspect.Decide(snap)
	warn(o.ErrOut, "", rep.Warnings)
	var outcomes []*unlock.Outcome
	for _, r := range rep.Results {
		if r.Decision.Verdict != v1alpha1.Stale {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		l := r.Facts.Lease
		opts.Arg = "lease/" + l.Name
		if ow := r.Facts.Owner; ow != nil && ow.Exists != nil && *ow.Exists {
			opts.Arg = ow.Ref.String()
		}
		out, err := o.unlocker.UnlockIn(ctx, snap, l.Namespace, l.Name, opts)
		if err != nil {
			// Also when interrupted: the lock being unlocked is reported,
			// with whether its write may have been applied.
			out = unlock.Failed(l.Namespace, l.Name, err)
			out.Commands = []v1alpha1.Advice{advice.Run("", o.unlocker.Advice.Explain(opts.Arg, l.Namespace))}
		}
		o.settle(ctx, out, opts)
		outcomes = append(outcomes, out)
		if ctx.Err() != nil || out.Unrecorded || out.WriteUnknown {
			// An unlock not on record, or a write whose fate is not known,
			// stops the run before any other write: one write at a time is
			// on record, or none follows.
			break
		}
	}
	if len(outcomes) == 0 && o.print.isHuman() && ctx.Err() == nil {
		where := "in any namespace"
		if o.namespace != "" {
			where = "in " + escape.Text(o.namespace) + " namespace"
		}
		fmt.Fprintf(o.ErrOut, "No stale locks found %s.\n", where)
	}
	if len(outcomes) > 0 && o.print.isHuman() {
		fmt.Fprintf(o.Out, "\n%s\n", summary(outcomes, ctx.Err() != nil, unrecorded(outcomes) != nil))
	}
	return o.finish(outcomes, ctx)
}

// printedOutcome is an outcome as the printers take it: its API form,
// which json, yaml and name print, and the outcome, which the human
// printer reads, in one of its phases.
type printedOutcome struct {
	*v1alpha1.UnlockResult
	// Lease is the lock's Lease name, also when it does not exist.
	Lease   string `json:"-"`
	outcome *unlock.Outcome
	phase   phase
}

// phase is which part of an outcome the human printer prints: a write is
// reported before the writes that follow it (the Event, the reconcile
// patch) begin, and what those did is printed after them.
type phase int

const (
	// whole: an outcome with no write, all of it.
	whole phase = iota
	// written: the lock, its verdict and the write made, nothing after.
	written
	// recorded: what followed the write: the Event, the reconcile, the
	// commands.
	recorded
)

func printable(out *unlock.Outcome, p phase) *printedOutcome {
	r := out.API()
	return &printedOutcome{UnlockResult: &r, Lease: out.Lease, outcome: out, phase: p}
}

// streamed is true for the formats printed as each outcome happens: the
// human one and names. json and yaml print one document at the end.
func (o *UnlockOptions) streamed() bool { return o.print.isHuman() || o.print.format() == "name" }

// settle reports one outcome as it happens and, when it wrote, records
// the unlock (the Event, the reconcile patch) only after the write is on
// record: printed in the streamed formats, a line on stderr in the others,
// whose document comes at the end.
func (o *UnlockOptions) settle(ctx context.Context, out *unlock.Outcome, opts unlock.Options) {
	wrote := out.Action == v1alpha1.ActionUnlocked
	p := whole
	if wrote {
		p = written
	}
	printed := false
	if o.streamed() {
		printed = o.printer.PrintObj(printable(out, p), o.Out) == nil && o.stdout.err == nil
	}
	if wrote && !printed {
		// stdout gets a document at the end, or it failed: the write is
		// on record on stderr before anything else is written.
		fmt.Fprintln(o.ErrOut, escape.Text(writeRecord(out)))
	}
	if !o.print.isHuman() && out.Action == v1alpha1.Failed {
		fmt.Fprintf(o.ErrOut, "error: %s: %s\n", escape.Text(out.Lease), text(out.Message))
	}
	warn(o.ErrOut, "", out.Warnings)
	if !wrote {
		return
	}
	before := len(out.Warnings)
	o.unlocker.Record(ctx, out, opts)
	if o.print.isHuman() {
		_ = o.printer.PrintObj(printable(out, recorded), o.Out) // a failure is o.stdout.err
	}
	warn(o.ErrOut, "", out.Warnings[before:])
}

// checkedWriter keeps the first error of the writes to it: the human
// printers write with fmt and would drop it, and a lock cleared while
// stdout fails must still be reported (on stderr) and fail the command.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(b)
	c.err = err
	return n, err
}

// writeRecord is one line saying what a write changed, for stderr when
// stdout gets a document only at the end.
func writeRecord(out *unlock.Outcome) string {
	l := out.Result.Facts.Lease
	return fmt.Sprintf("Unlocked lease/%s in namespace %s at resourceVersion %s (verdict %s, lock ID %s).", l.Name, l.Namespace, l.ResourceVersion, out.Result.Decision.Verdict, inspect.Quoted(l.ID))
}

// finish prints json or yaml (every outcome, also after a failure or
// Ctrl-C) and turns the worst outcome into the exit code. When that
// printer fails, every outcome goes to stderr in the human form: the
// locks it cleared are on record whatever the format.
func (o *UnlockOptions) finish(outcomes []*unlock.Outcome, ctx context.Context) error {
	if !o.streamed() {
		var obj runtime.Object
		if !o.AllStale {
			obj = printable(outcomes[0], whole).UnlockResult
		} else {
			list := v1alpha1.NewUnlockResultList()
			for _, out := range outcomes {
				list.Items = append(list.Items, out.API())
			}
			obj = list
		}
		if err := o.printer.PrintObj(obj, o.Out); err != nil {
			p := &outcomePrinter{now: o.factory.clock}
			for _, out := range outcomes {
				_ = p.PrintObj(printable(out, whole), o.ErrOut)
			}
			return fmt.Errorf("printing the outcome as %s: %w (the outcome of every lock is above, on stderr)", o.print.format(), err)
		}
	}
	if out := unrecorded(outcomes); out != nil {
		more := ""
		if o.AllStale {
			more = "; the run stopped there, so no other lock was cleared"
		}
		return fmt.Errorf("lease %s in namespace %s was unlocked, but the unlock is not on record: its Event could not be created (the warning above says why)%s", out.Lease, out.Namespace, more)
	}
	if o.stdout.err != nil {
		return fmt.Errorf("writing the output: %w (every lock cleared is reported on stderr)", o.stdout.err)
	}
	worst := ExitOK
	for _, out := range outcomes {
		switch out.Action {
		case v1alpha1.Failed:
			worst = ExitError
		case v1alpha1.Refused, v1alpha1.Conflict:
			if worst == ExitOK {
				worst = ExitRefused
			}
		}
	}
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case worst != ExitOK:
		return exitCode(worst)
	}
	return nil
}

// outcomePrinter prints outcomes for a reader, a blank line between two.
type outcomePrinter struct {
	now     func() time.Time
	printed bool
}

func (p *outcomePrinter) PrintObj(obj runtime.Object, w io.Writer) error {
	po, ok := obj.(*printedOutcome)
	if !ok {
		return fmt.Errorf("an unlock printer cannot print a %T", obj)
	}
	if po.phase != recorded {
		if p.printed {
			fmt.Fprintln(w)
		}
		p.printed = true
		printOutcome(w, po.outcome, p.now())
	}
	if po.phase != written {
		printAfter(w, po.outcome)
	}
	return nil
}

// printHuman prints one whole outcome for a reader.
func printHuman(w io.Writer, out *unlock.Outcome, now time.Time) {
	printOutcome(w, out, now)
	printAfter(w, out)
}

// printOutcome prints the lock, then what happened to it.
func printOutcome(w io.Writer, out *unlock.Outcome, now time.Time) {
	fmt.Fprintf(w, "Lock:     lease/%s in namespace %s\n", text(out.Lease), text(out.Namespace))
	r := out.Result
	l := r.Facts.Lease
	if l.Name != "" {
		obj := "<none>"
		if r.Facts.Owner != nil {
			obj = r.Facts.Owner.Ref.String()
		}
		writeWrapped(w, "Object:   ", text(obj))
		if l.Held {
			writeWrapped(w, "Holder:   ", text(unlock.Holder(l, now)))
		}
		writeWrapped(w, "Verdict:  ", string(r.Decision.Verdict)+": "+text(r.Decision.Reason))
	}
	write := ""
	if l.Name != "" {
		c := unlock.Change(l)
		write = fmt.Sprintf("update Lease %s/%s at resourceVersion %s: spec.holderIdentity %s -> null, remove annotation %s; labels, other annotations and other fields unchanged",
			l.Namespace, l.Name, c.ResourceVersion, inspect.Quoted(c.HolderIdentity), c.RemoveAnnotation)
	}
	switch out.Action {
	case v1alpha1.WouldUnlock:
		writeWrapped(w, "Would:    ", text(write))
		fmt.Fprintln(w, "Dry run: nothing was written. To unlock:")
	case v1alpha1.Refused:
		writeWrapped(w, "Refused:  ", text(out.Message))
		fmt.Fprintln(w, "Nothing was written.")
	case v1alpha1.AlreadyUnlocked:
		writeWrapped(w, "", text(out.Message)+"; nothing was written.")
	case v1alpha1.Conflict:
		writeWrapped(w, "Conflict: ", text(out.Message)+":")
	case v1alpha1.Failed:
		if out.WriteUnknown {
			writeWrapped(w, "Failed:   ", text(out.Message)+":")
		} else {
			writeWrapped(w, "Failed:   ", text(out.Message)+"; nothing was written. To look again:")
		}
	case v1alpha1.ActionUnlocked:
		writeWrapped(w, "Unlocked: ", text(write))
	}
}

// printAfter prints what followed the outcome: for a write, the Event and
// the reconcile; then the commands to run next.
func printAfter(w io.Writer, out *unlock.Outcome) {
	if out.Action == v1alpha1.ActionUnlocked {
		if out.Event != "" {
			fmt.Fprintf(w, "Recorded Event %s (reason %s).\n", escape.Text(out.Event), audit.Reason)
		}
		if out.Reconcile != "" {
			fmt.Fprintf(w, "Annotated %s with %s: CAPTF's controller reconciles it now.\n", escape.Text(out.Result.Facts.Owner.Ref.String()), escape.Text(out.Reconcile))
		} else if len(out.Commands) > 0 {
			writeWrapped(w, "", "CAPTF's controller does not watch Leases; it sees the free lock at its next reconcile. To trigger one now:")
		}
	}
	for _, c := range out.Commands {
		writeAdvice(w, c)
	}
}

// unrecorded is the outcome whose unlock could not be recorded as an
// Event, nil for none: the run stops after it.
func unrecorded(outcomes []*unlock.Outcome) *unlock.Outcome {
	for _, out := range outcomes {
		if out.Unrecorded {
			return out
		}
	}
	return nil
}

func summary(outcomes []*unlock.Outcome, interrupted, unrecorded bool) string {
	counts := map[v1alpha1.Action]int{}
	for _, o := range outcomes {
		counts[o.Action]++
	}
	words := map[v1alpha1.Action]string{
		v1alpha1.ActionUnlocked: "unlocked", v1alpha1.WouldUnlock: "would unlock", v1alpha1.AlreadyUnlocked: "already unlocked",
		v1alpha1.Refused: "refused", v1alpha1.Conflict: "changed meanwhile", v1alpha1.Failed: "failed",
	}
	var parts []string
	for _, a := range []v1alpha1.Action{v1alpha1.ActionUnlocked, v1alpha1.WouldUnlock, v1alpha1.AlreadyUnlocked, v1alpha1.Refused, v1alpha1.Conflict, v1alpha1.Failed} {
		if counts[a] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", words[a], counts[a]))
		}
	}
	noun := "stale locks"
	if len(outcomes) == 1 {
		noun = "stale lock"
	}
	s := fmt.Sprintf("%d %s: %s.", len(outcomes), noun, strings.Join(parts, ", "))
	switch {
	case interrupted:
		s += " Interrupted: the locks after these were not looked at."
	case unrecorded:
		s += " Stopped: the last unlock could not be recorded as an Event, so the locks after it were not looked at."
	}
	return s
}
