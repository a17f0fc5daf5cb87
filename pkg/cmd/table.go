package cmd

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/fatih/color"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/escape"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

type tableOptions struct {
	wide, noHeaders, namespace, color bool
	// context adds a CONTEXT column first (--contexts, --all-contexts).
	context bool
	// events adds an EVENT column first (--output-watch-events).
	events bool
}

// tableFlags are the flags of the human table: -o wide aside, which is
// an output format.
type tableFlags struct {
	noHeaders bool
	color     string
}

func (f *tableFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.noHeaders, "no-headers", false, "Don't print headers (table output only).")
	cmd.Flags().StringVar(&f.color, "color", colorAuto, "Colour the verdicts: auto (only on a terminal, NO_COLOR unset, TERM not dumb), always or never.")
	_ = cmd.RegisterFlagCompletionFunc("color", completeValues(colorAuto, colorAlways, colorNever))
}

func (f *tableFlags) validate() error {
	switch f.color {
	case colorAuto, colorAlways, colorNever:
		return nil
	}
	return fmt.Errorf("--color must be one of auto, always, never, not %q", f.color)
}

// useColor decides from the real writer and the flag: colour only on a
// terminal (as cli-runtime's printers tell one), with NO_COLOR unset or
// empty (no-color.org) and TERM not "dumb".
func (f *tableFlags) useColor(w io.Writer) bool {
	switch f.color {
	case colorAlways:
		return true
	case colorNever:
		return false
	}
	return os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" && printers.IsTerminal(w)
}

// Colour modes of --color.
const (
	colorAuto   = "auto"
	colorAlways = "always"
	colorNever  = "never"
)

// verdictColors: Stale yellow, Foreign and Unknown red, Live green.
var verdictColors = map[v1alpha1.Verdict]color.Attribute{
	v1alpha1.Stale:   color.FgYellow,
	v1alpha1.Foreign: color.FgRed,
	v1alpha1.Unknown: color.FgRed,
	v1alpha1.Live:    color.FgGreen,
}

// tablePrinter prints locks kubectl's way: UPPERCASE headers, left
// aligned, 3-space gaps, no wrapping, <none> for empty. Everything the
// holder wrote is terminal-escaped. It prints a LockList, a Lock or a
// watch event (a row with its type under EVENT; in a watch with events,
// the first list's rows are ADDED). It remembers the first table's column
// widths, so that a watch's later rows line up under it, as kubectl get
// -w's do.
type tablePrinter struct {
	opts     tableOptions
	colorFor func(io.Writer) bool
	now      func() time.Time
	// widths are the columns' widths once a table was printed.
	widths []int
}

// PrintObj prints the object's rows; the header only the first time.
func (p *tablePrinter) PrintObj(obj runtime.Object, w io.Writer) error {
	o := p.opts
	o.color = p.colorFor != nil && p.colorFor(w)
	now := time.Now()
	if p.now != nil {
		now = p.now()
	}
	var rows [][]string
	switch v := obj.(type) {
	case *v1alpha1.LockList:
		for _, l := range v.Items {
			rows = append(rows, row(l, eventAdded, o, now))
		}
		// A context that could not be read is a marked row, not a failure.
		for _, f := range v.ContextErrors {
			rows = append(rows, failedContextRow(f, o))
		}
	case *v1alpha1.Lock:
		rows = append(rows, row(*v, eventAdded, o, now))
	case *metav1.WatchEvent:
		l, ok := v.Object.Object.(*v1alpha1.Lock)
		if !ok {
			return fmt.Errorf("a lock table cannot print a %T", v.Object.Object)
		}
		rows = append(rows, row(*l, v.Type, o, now))
	default:
		return fmt.Errorf("a lock table cannot print a %T", obj)
	}
	if p.widths == nil && !o.noHeaders {
		rows = append([][]string{header(o)}, rows...)
	}
	return p.render(w, rows)
}

func header(o tableOptions) []string {
	h := []string{"OBJECT", "VERDICT", "HOLDER", "OPERATION", "AGE"}
	if o.wide {
		h = append(h, "LOCK ID", "LEASE", "VERSION", "ACTIVE JOB", "RUNNER END", "REASON")
	}
	return prefixed(h, o, "NAMESPACE", "CONTEXT", "EVENT")
}

// prefixed puts the optional first columns in front of cells.
func prefixed(cells []string, o tableOptions, namespace, context, event string) []string {
	if o.namespace {
		cells = append([]string{namespace}, cells...)
	}
	if o.context {
		cells = append([]string{context}, cells...)
	}
	if o.events {
		cells = append([]string{event}, cells...)
	}
	return cells
}

// render pads every cell to its column's width, remembered from the first
// table, and lets tablewriter lay the rows out.
func (p *tablePrinter) render(w io.Writer, rows [][]string) error {
	if len(rows) == 0 {
		return nil
	}
	for _, r := range rows {
		for i := range r {
			r[i] = strings.TrimSpace(r[i]) // the padding is the table's alone
		}
	}
	if p.widths == nil {
		p.widths = make([]int, len(header(p.opts)))
		for _, r := range rows {
			for i, c := range r {
				p.widths[i] = max(p.widths[i], twwidth.Width(c))
			}
		}
		if p.opts.events { // every event type fits, not only ADDED
			p.widths[0] = max(p.widths[0], len(eventModified))
		}
	}
	var buf bytes.Buffer
	t := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Settings: tw.Settings{Separators: tw.SeparatorsNone, Lines: tw.LinesNone},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off), // keep the padding to the first table's widths
		tablewriter.WithPadding(tw.Padding{Left: "", Right: "   ", Overwrite: true}),
	)
	for _, r := range rows {
		padded := make([]string, len(r))
		for i, c := range r {
			padded[i] = c + strings.Repeat(" ", max(0, p.widths[i]-twwidth.Width(c)))
		}
		if err := t.Append(padded); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	// The renderer pads the last column; kubectl does not.
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		line = strayReset.ReplaceAllString(line, "\x1b[0m$1")
		if _, err := io.WriteString(w, strings.TrimRight(line, " ")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// strayReset is the reset tablewriter appends to a coloured cell after its
// padding, which stands before the next cell: a verdict ends in its own
// reset. No ESC of the cluster's reaches a cell (escape.Text).
var strayReset = regexp.MustCompile("\x1b\\[0m( +)\x1b\\[0m")

// failedContextRow marks a context that could not be read: <error> where
// its objects would be, the error as its reason.
func failedContextRow(f v1alpha1.ContextError, o tableOptions) []string {
	cells := []string{"<error>", "<none>", "<none>", "<none>", "<none>"}
	if o.wide {
		cells = append(cells, "<none>", "<none>", "<none>", "<none>", "<none>", escape.Text(f.Error))
	}
	return prefixed(cells, o, "<none>", escape.Text(f.Context), "<none>")
}

func row(l v1alpha1.Lock, event string, o tableOptions, now time.Time) []string {
	obj, holder, op, age, id, version := "", "", "", "", "", ""
	if l.Object != nil {
		obj = object.TypeName(l.Object.Kind, l.Object.Name)
	}
	if k := l.Lock; k != nil {
		holder, op, id, version = k.Who, inspect.ShortOperation(k.Operation), k.ID, k.Version
		if k.Created != nil {
			age = duration.HumanDuration(now.Sub(*k.Created))
		} else {
			age = "<unknown>"
		}
		if k.InfoID != "" && k.InfoID != k.ID {
			id += " (info " + k.InfoID + ")"
		}
	}
	verdict := string(l.Verdict)
	if c, ok := verdictColors[l.Verdict]; ok && o.color {
		cc := color.New(c)
		cc.EnableColor()
		verdict = cc.Sprint(verdict)
	}
	activeJob := l.ActiveJob
	for _, u := range l.Unreadable {
		if u == "jobs" {
			activeJob = "<unreadable>"
		}
	}
	cells := []string{none(escape.Text(obj)), verdict, none(escape.Text(holder)), none(escape.Text(op)), none(age)}
	if o.wide {
		death := ""
		if l.Holder != nil && l.Holder.Death != nil {
			death = l.Holder.Death.Summary
		}
		cells = append(cells, none(escape.Text(id)), escape.Text(l.Name), none(escape.Text(version)), none(escape.Text(activeJob)), none(escape.Text(death)), escape.Text(l.Reason))
	}
	return prefixed(cells, o, escape.Text(l.Namespace), escape.Text(l.Context), event)
}

func none(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
