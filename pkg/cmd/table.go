package cmd

import (
	"bytes"
	"io"
	"strings"
	"time"

	"github.com/fatih/color"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/escape"
)

type tableOptions struct {
	wide, noHeaders, namespace, color bool
	// context adds a CONTEXT column first (--contexts, --all-contexts).
	context bool
	// event, when set, adds an EVENT column first (--output-watch-events).
	event string
	now   time.Time
}

// verdictColors: Stale yellow, Foreign and Unknown red, Live green.
var verdictColors = map[v1alpha1.Verdict]color.Attribute{
	v1alpha1.Stale:   color.FgYellow,
	v1alpha1.Foreign: color.FgRed,
	v1alpha1.Unknown: color.FgRed,
	v1alpha1.Live:    color.FgGreen,
}

// printTable prints kubectl's way: UPPERCASE headers, left aligned, 3-space
// gaps, no wrapping, <none> for empty. Everything the holder wrote is
// terminal-escaped.
func printTable(w io.Writer, locks []v1alpha1.Lock, failed []v1alpha1.ContextError, o tableOptions) error {
	if o.now.IsZero() {
		o.now = time.Now()
	}
	header := []string{"OBJECT", "VERDICT", "HOLDER", "OPERATION", "AGE"}
	if o.wide {
		header = append(header, "LOCK ID", "LEASE", "VERSION", "ACTIVE JOB", "RUNNER END", "REASON")
	}
	if o.namespace {
		header = append([]string{"NAMESPACE"}, header...)
	}
	if o.context {
		header = append([]string{"CONTEXT"}, header...)
	}
	if o.event != "" {
		header = append([]string{"EVENT"}, header...)
	}
	var buf bytes.Buffer
	t := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Settings: tw.Settings{Separators: tw.SeparatorsNone, Lines: tw.LinesNone},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: "   ", Overwrite: true}),
	)
	if !o.noHeaders {
		t.Header(header)
	}
	for _, l := range locks {
		if err := t.Append(row(l, o)); err != nil {
			return err
		}
	}
	// A context that could not be read is a marked row, not a failure.
	for _, f := range failed {
		cells := make([]string, len(header))
		for i := range cells {
			cells[i] = "<none>"
		}
		cells[0], cells[1] = escape.Text(f.Context), "<error>"
		if o.wide {
			cells[len(cells)-1] = escape.Text(f.Error)
		}
		if err := t.Append(cells); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	// The renderer pads the last column; kubectl does not.
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		if _, err := io.WriteString(w, strings.TrimRight(line, " ")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

func row(l v1alpha1.Lock, o tableOptions) []string {
	obj, holder, op, age, id, version := "", "", "", "", "", ""
	if l.Object != nil {
		obj = strings.ToLower(l.Object.Kind) + "/" + l.Object.Name
	}
	if k := l.Lock; k != nil {
		holder, op, id, version = k.Who, shortOperation(k.Operation), k.ID, k.Version
		if k.Created != nil {
			age = duration.HumanDuration(o.now.Sub(*k.Created))
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
	if o.namespace {
		cells = append([]string{escape.Text(l.Namespace)}, cells...)
	}
	if o.context {
		cells = append([]string{escape.Text(l.Context)}, cells...)
	}
	if o.event != "" {
		cells = append([]string{o.event}, cells...)
	}
	return cells
}

// shortOperations are the runtimes' operation types, as a reader says them.
var shortOperations = map[string]string{
	"OperationTypeApply":   "apply",
	"OperationTypePlan":    "plan",
	"OperationTypeRefresh": "refresh",
	"OperationTypeInvalid": "invalid",
}

// shortOperation is the lock's operation as kubectl users read it:
// "apply" for OperationTypeApply; any other value as it is.
func shortOperation(op string) string {
	if s, ok := shortOperations[op]; ok {
		return s
	}
	return op
}

func none(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
