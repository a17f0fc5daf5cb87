package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/captf-io/kubectl-captf/pkg/advice"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/audit"
	"github.com/captf-io/kubectl-captf/pkg/escape"
	"github.com/captf-io/kubectl-captf/pkg/explain"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/inspect/cluster"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

const explainExample = `  # Why is this object's state locked, and what to do about it
  kubectl captf explain terraformcluster/demo -n infra

  # Plurals and group-qualified names work as in kubectl
  kubectl captf explain terraformmachines.infrastructure.cluster.x-k8s.io web-1 -n infra

  # A lock whose object is gone, or where CAPTF's CRDs are not installed
  kubectl captf explain lease/lock-tfstate-default-d980a2553508a5e1-c -n infra

  # As a captf.io/v1alpha1 Explanation
  kubectl captf explain terraformcluster/demo -n infra -o yaml`

// width is the column human output wraps at.
const width = 100

// ExplainOptions are the options of `kubectl captf explain`.
type ExplainOptions struct {
	factory *factory
	print   *printFlags

	args      []string
	namespace string
	printer   printers.ResourcePrinter
	reader    *cluster.Reader
	explainer *explain.Explainer
	genericiooptions.IOStreams
}

// NewExplainOptions are the options with their defaults.
func NewExplainOptions(f *factory, streams genericiooptions.IOStreams) *ExplainOptions {
	o := &ExplainOptions{factory: f, IOStreams: streams}
	o.print = newPrintFlags(func(bool) printers.ResourcePrinter {
		return printers.ResourcePrinterFunc(func(obj runtime.Object, w io.Writer) error {
			x, ok := obj.(*v1alpha1.Explanation)
			if !ok {
				return fmt.Errorf("an explanation printer cannot print a %T", obj)
			}
			printExplanation(w, x, f.clock())
			return nil
		})
	}, "json", "yaml")
	return o
}

// NewCmdExplain is `kubectl captf explain`.
func NewCmdExplain(f *factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewExplainOptions(f, streams)
	cmd := &cobra.Command{
		Use:   "explain (TYPE/NAME | TYPE NAME | lease/NAME)",
		Short: "Explain a lock step by step, as CAPTF's controller decides, and what to do",
		Long: `Explain one object's state lock: the checks CAPTF's controller makes, in its
order and with what was observed for each, the verdict, what the controller
will do next, and the commands that fix it. It also shows the object's
StateReadable condition, the latest ForceUnlocked and StateLocked events, the
active Job, CAPTF's run lease and the state Secrets' names. It never writes.`,
		Example:           explainExample,
		ValidArgsFunction: completeTargets(f),
		Args:              targetArgs("name the object to explain (TYPE/NAME or lease/NAME)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.args = args
			return run(cmd.Context(), o)
		},
	}
	o.print.addFlags(cmd)
	return cmd
}

// targetArgs accepts TYPE/NAME or TYPE NAME; missing tells what to name.
func targetArgs(missing string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return errors.New(missing)
		case len(args) > 2:
			return fmt.Errorf("name one object (TYPE/NAME or TYPE NAME), not %d arguments", len(args))
		}
		return nil
	}
}

// Complete reads the namespace and builds the clients and the printer.
func (o *ExplainOptions) Complete() error {
	var err error
	if o.namespace, o.printer, err = o.factory.complete(o.print, false); err != nil {
		return err
	}
	c, err := o.factory.Clients()
	if err != nil {
		return err
	}
	o.reader = c.reader
	o.explainer = &explain.Explainer{Advice: o.factory.advice(), Now: o.factory.clock}
	return nil
}

// Validate has nothing left to check: the arguments are cobra's Args,
// the format is checked by Complete's printer.
func (o *ExplainOptions) Validate() error { return nil }

// Run resolves the argument, explains and prints.
func (o *ExplainOptions) Run(ctx context.Context) error {
	t, err := resolveTargetUntil(ctx, o.factory, o.namespace, o.args)
	if err != nil {
		return err
	}
	snap, around, err := o.reader.ReadExplained(ctx, t.Namespace, t.Lease, t.Object, t.Fetched)
	if err != nil {
		return err
	}
	x, warnings := o.explainer.Explain(explain.Target{Namespace: t.Namespace, Lease: t.Lease, Object: t.Object, Arg: t.Arg}, snap, around)
	warn(o.ErrOut, "", warnings)
	return o.printer.PrintObj(x, o.Out)
}

// proseColumns bounds each line of text explain and unlock print: what
// they print follows the lock, not the bytes its holder chose (review26i
// P1). They name a holder's values as the plugin's sentences do
// (inspect.Named: quoted and cut where they are no plain name); this is
// the backstop for anything else the cluster wrote (a condition's or an
// Event's message). -o json has every value whole, and the unlock command
// carries the ID whole.
const proseColumns = 16384

// text is s escaped as a table cell is (spaces that could mislead shown
// as \x20), at most proseColumns wide.
func text(s string) string { return escape.Cell(s, proseColumns) }

// printExplanation prints for a reader, within 100 columns.
func printExplanation(w io.Writer, x *v1alpha1.Explanation, now time.Time) {
	obj := "<none>"
	if x.Object != nil {
		obj = object.TypeName(x.Object.Kind, x.Object.Name)
		if x.Object.Exists != nil && !*x.Object.Exists {
			obj += " (does not exist)"
		}
	}
	field := func(label, text string) { writeWrapped(w, fmt.Sprintf("%-10s", label+":"), text) }
	field("Object", text(obj+" in namespace "+x.Namespace))
	if x.Cluster != "" {
		// Only when the object names one: the screen is kept for the lock.
		field("Cluster", text(x.Cluster))
	}
	field("Lock", text("lease/"+x.Name))
	if x.Lock != nil {
		// Named as the sentences name them: a holder's "ops@x (apply,
		// for 4m)" shows quoted, not as the plugin's own words
		// (review-prose m4).
		holder := inspect.Named(x.Lock.Who)
		if x.Lock.InfoError != "" {
			holder = "unreadable lock info"
		}
		id := inspect.Named(x.Lock.ID)
		if x.Lock.InfoID != "" && x.Lock.InfoID != x.Lock.ID {
			id += " (lock info says " + inspect.Named(x.Lock.InfoID) + ")"
		}
		field("Holder", text(holder)+opAndAge(x.Lock, now))
		field("Lock ID", text(id))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "How CAPTF's controller checks it:")
	for n, s := range x.Steps {
		writeWrapped(w, fmt.Sprintf("  %d. ", n+1), text(fmt.Sprintf("%s %s -> %s", s.Check, s.Observed, s.Result)))
	}
	fmt.Fprintln(w)
	field("Verdict", string(x.Verdict)+": "+text(x.Reason))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "What CAPTF does next:")
	writeWrapped(w, "  ", text(x.ControllerAction))
	if len(x.Advice) > 0 {
		fmt.Fprintln(w, "What you can do:")
		for _, a := range x.Advice {
			writeAdvice(w, a)
		}
	}
	if x.Disagreement != "" {
		fmt.Fprintln(w)
		writeWrapped(w, "Note: ", text(x.Disagreement))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Context:")
	c := x.Context
	ctxField := func(label, text string) { writeWrapped(w, fmt.Sprintf("  %-15s", label+":"), text) }
	if s := c.StateReadable; s != nil {
		age := ""
		if s.LastTransitionTime != nil {
			age = ", " + duration.HumanDuration(now.Sub(*s.LastTransitionTime)) + " ago"
		}
		ctxField("StateReadable", text(fmt.Sprintf("%s/%s%s: %s", s.Status, s.Reason, age, s.Message)))
	} else {
		ctxField("StateReadable", "<none>")
	}
	if len(c.Events) == 0 {
		ctxField("Events", "no ForceUnlocked, StateLocked or OperatorForceUnlocked events")
	}
	audited := false
	for _, e := range c.Events {
		age := ""
		if e.Time != nil {
			age = " " + duration.HumanDuration(now.Sub(*e.Time)) + " ago"
		}
		by := ""
		if e.Reason == audit.Reason {
			audited = true
			by = fmt.Sprintf(", reported by %s (%s)", none(e.ReportingController), none(e.ReportingInstance))
			if e.ReportingController != audit.Controller {
				by += ", not by kubectl captf"
			}
		}
		ctxField("Event", text(fmt.Sprintf("%s (%s)%s%s: %s", e.Reason, e.Type, age, by, e.Note)))
	}
	if audited {
		writeWrapped(w, fmt.Sprintf("  %-15s", ""), "Events are not authenticated: anyone who may create Events in the namespace can write one like it. The API server's audit log is the record of who wrote the Lease.")
	}
	if x.Holder != nil && x.Holder.Death != nil {
		ctxField("Runner end", text(x.Holder.Death.Summary))
	}
	for _, e := range c.RunnerEvents {
		age := ""
		if e.Time != nil {
			age = " " + duration.HumanDuration(now.Sub(*e.Time)) + " ago"
		}
		ctxField("Runner event", text(fmt.Sprintf("%s (%s)%s: %s", e.Reason, e.Type, age, e.Note)))
	}
	if j := c.ActiveJob; j != nil {
		since := ""
		if j.StartTime != nil {
			since = ", started " + duration.HumanDuration(now.Sub(*j.StartTime)) + " ago"
		}
		ctxField("Active Job", text(fmt.Sprintf("%s (%s, attempt %d%s; from %s)", j.Name, j.Operation, j.Attempt, since, j.From)))
	} else {
		ctxField("Active Job", "<none>")
	}
	if r := c.RunLease; r != nil {
		ctxField("Run lease", text(fmt.Sprintf("%s held by %s (op %s, since %s)", r.Name, none(r.Holder), none(r.Op), none(r.AcquiredAt))))
	} else {
		ctxField("Run lease", "<none>")
	}
	secrets := fmt.Sprintf("%d", len(c.StateSecrets))
	if len(c.StateSecrets) > 0 {
		secrets += ": " + strings.Join(c.StateSecrets, ", ")
	}
	ctxField("State Secrets", text(secrets))
	for _, u := range c.Unreadable {
		ctxField("Unreadable", text(u))
	}
}

func opAndAge(l *v1alpha1.LockInfo, now time.Time) string {
	var parts []string
	if l.Operation != "" {
		// Quoted unless a known type: a holder's "apply, for 3h" must not
		// pass for the plugin's own words on the Holder line.
		parts = append(parts, inspect.QuotedOperation(l.Operation))
	}
	if l.Created != nil {
		parts = append(parts, "for "+duration.HumanDuration(now.Sub(*l.Created)))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + escape.Text(strings.Join(parts, ", ")) + ")"
}

// writeWrapped writes text after a prefix, wrapped at width with the
// continuation lines indented under the text.
func writeWrapped(w io.Writer, prefix, text string) {
	indent := strings.Repeat(" ", len(prefix))
	line, empty := prefix, true
	for _, word := range strings.Fields(text) {
		if !empty && len(line)+1+len(word) > width {
			fmt.Fprintln(w, line)
			line, empty = indent, true
		}
		if !empty {
			line += " "
		}
		line, empty = line+word, false
	}
	fmt.Fprintln(w, strings.TrimRight(line, " "))
}

// writeAdvice writes one piece of advice for a person: its comment, then
// its command, each argument quoted by package shell, within width: a long
// command breaks between arguments with backslash continuations, so that
// it still pastes as one command. A command whose arguments cannot be
// shown safely is not printed; a comment says why.
func writeAdvice(w io.Writer, a v1alpha1.Advice) {
	if a.Comment != "" {
		writeWrapped(w, "  # ", escape.Text(a.Comment))
	}
	if len(a.Argv) == 0 {
		return
	}
	words, err := advice.Words(a.Argv)
	if err != nil {
		writeWrapped(w, "  # ", "no command printed: "+err.Error())
		return
	}
	// A flag and its value stay on one line: "--context" at the end of
	// a line and its value on the next reads as two things.
	var units []string
	for n := 0; n < len(words); n++ {
		u := words[n]
		if strings.HasPrefix(a.Argv[n], "--") && !strings.Contains(a.Argv[n], "=") && n+1 < len(words) && !strings.HasPrefix(a.Argv[n+1], "-") && n > 1 {
			n++
			u += " " + words[n]
		}
		units = append(units, u)
	}
	line := "  "
	for n, u := range units {
		if n > 0 && len(line)+1+len(u)+2 > width {
			fmt.Fprintln(w, line+" \\")
			line = "      " + u
			continue
		}
		if n > 0 {
			line += " "
		}
		line += u
	}
	fmt.Fprintln(w, line)
}
