package cmd

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/fatih/color"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
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
		h = append(h, "CLUSTER", "LOCK ID", "LEASE", "VERSION", "ACTIVE JOB", "RUNNER END", "REASON")
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
// table, and writes each row as soon as it is laid out: cells three spaces
// apart, the last one not padded, as kubectl prints them. Every cell is
// bounded (columnWidths), so a row costs what its columns allow, whatever
// a holder wrote.
func (p *tablePrinter) render(w io.Writer, rows [][]string) error {
	if len(rows) == 0 {
		return nil
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
	bw := bufio.NewWriter(w)
	var line strings.Builder
	for _, r := range rows {
		line.Reset()
		for i, c := range r {
			if i > 0 {
				line.WriteString(columnGap)
			}
			line.WriteString(c)
			line.WriteString(strings.Repeat(" ", max(0, p.widths[i]-twwidth.Width(c))))
		}
		if _, err := bw.WriteString(strings.TrimRight(line.String(), " ") + "\n"); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// columnGap is what separates two columns, as in kubectl's tables.
const columnGap = "   "

// failedContextRow marks a context that could not be read: <error> where
// its objects would be, the error as its reason.
func failedContextRow(f v1alpha1.ContextError, o tableOptions) []string {
	cells := []string{"<error>", "<none>", "<none>", "<none>", "<none>"}
	if o.wide {
		cells = append(cells, "<none>", "<none>", "<none>", "<none>", "<none>", "<none>", f.Error)
	}
	return bounded(prefixed(cells, o, "<none>", f.Context, "<none>"), o)
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
	activeJob := l.ActiveJob
	for _, u := range l.Unreadable {
		if u == "jobs" {
			activeJob = "<unreadable>"
		}
	}
	cells := []string{none(obj), string(l.Verdict), none(holder), none(op), none(age)}
	if o.wide {
		death := ""
		if l.Holder != nil && l.Holder.Death != nil {
			death = l.Holder.Death.Summary
		}
		cells = append(cells, none(l.Cluster), none(id), l.Name, none(version), none(activeJob), none(death), l.Reason)
	}
	cells = bounded(prefixed(cells, o, l.Namespace, l.Context, event), o)
	if c, ok := verdictColors[l.Verdict]; ok && o.color {
		cc := color.New(c)
		cc.EnableColor()
		i := slices.Index(header(o), "VERDICT")
		cells[i] = cc.Sprint(cells[i])
	}
	return cells
}

// bounded is each cell escaped and bounded as its column's entry in
// columnWidths says (escape.Cell): the cells of a row as the table shows
// them.
func bounded(cells []string, o tableOptions) []string {
	for i, h := range header(o) {
		cells[i] = escape.Cell(cells[i], columnWidths[h])
	}
	return cells
}

// Bounds of a cell, in columns: a longer value is cut, ending in
// escape.Cut, so that a table costs memory and bytes in proportion to its
// rows, whatever a holder or the cluster wrote (-o json and -o yaml carry
// every value whole). docs/output.md lists them.
const (
	// nameWidth bounds the names the API bounds, which must stay whole to
	// be copied into a command: a Kubernetes name has at most 253
	// characters, a namespace 63, and an object cell adds its kind
	// ("terraformmachinepool/", 21 more). A Cluster API Cluster's name
	// (CLUSTER), to be given to --capi-cluster, is one too. A kubeconfig
	// context name, which no API bounds, is cut at the same width.
	nameWidth = 300
	// textWidth bounds what a holder writes into the lock info and the
	// short values beside it (HOLDER, OPERATION, LOCK ID, VERSION, ACTIVE
	// JOB): a user name (32) at a host name (64), a lock ID with a
	// different info ID (two UUIDs, 80 with " (info …)"), a Job name (63)
	// all fit.
	textWidth = 100
	// sentenceWidth bounds the plugin's sentences (REASON, RUNNER END,
	// a context's error), which quote what a holder and the cluster wrote
	// (a host, a pod's message, an API error) around the plugin's words.
	sentenceWidth = 400
)

// columnWidths is each column's bound; a column without one (VERDICT,
// AGE, EVENT: the plugin's own short words) is escaped but not cut. A new
// column of cluster text gets its entry here.
var columnWidths = map[string]int{
	"CONTEXT":    nameWidth,
	"NAMESPACE":  nameWidth,
	"OBJECT":     nameWidth,
	"CLUSTER":    nameWidth,
	"LEASE":      nameWidth,
	"HOLDER":     textWidth,
	"OPERATION":  textWidth,
	"LOCK ID":    textWidth,
	"VERSION":    textWidth,
	"ACTIVE JOB": textWidth,
	"RUNNER END": sentenceWidth,
	"REASON":     sentenceWidth,
}

func none(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
