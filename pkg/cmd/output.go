package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
)

// Colour modes of --color.
const (
	colorAuto   = "auto"
	colorAlways = "always"
	colorNever  = "never"
)

// outputFlags are kubectl's output flags: -o through cli-runtime's
// PrintFlags (json, yaml, jsonpath, go-template), plus the table's own
// wide and name, --no-headers and --color.
type outputFlags struct {
	printFlags *genericclioptions.PrintFlags
	noHeaders  bool
	color      string
}

func newOutputFlags() *outputFlags {
	return &outputFlags{printFlags: genericclioptions.NewPrintFlags(""), color: colorAuto}
}

func (f *outputFlags) addFlags(cmd *cobra.Command) {
	f.printFlags.AddFlags(cmd)
	formats := append([]string{"wide", "name"}, f.printFlags.AllowedFormats()...)
	cmd.Flags().Lookup("output").Usage = "Output format. One of: (" + strings.Join(dedupe(formats), ", ") + ")."
	cmd.Flags().BoolVar(&f.noHeaders, "no-headers", false, "Don't print headers (table output only).")
	cmd.Flags().StringVar(&f.color, "color", colorAuto, "Colour the verdicts: auto (only on a terminal, NO_COLOR unset, TERM not dumb), always or never.")
	_ = cmd.RegisterFlagCompletionFunc("color", completeValues(colorAuto, colorAlways, colorNever))
	_ = cmd.RegisterFlagCompletionFunc("output", completeValues(dedupe(append([]string{"wide", "name"}, f.printFlags.AllowedFormats()...))...))
}

func (f *outputFlags) format() string { return *f.printFlags.OutputFormat }

// human is true for table output, where an empty result is said on stderr.
func (f *outputFlags) human() bool { return f.format() == "" || f.format() == "wide" }

func (f *outputFlags) validate() error {
	switch f.color {
	case colorAuto, colorAlways, colorNever:
	default:
		return fmt.Errorf("--color must be one of auto, always, never, not %q", f.color)
	}
	switch f.format() {
	case "", "wide", "name":
		return nil
	}
	_, err := f.printFlags.ToPrinter()
	return err
}

// print writes the locks in the chosen format. failed are the contexts
// that could not be read (--contexts, --all-contexts), and multi says
// that contexts are shown at all.
func (f *outputFlags) print(s genericiooptions.IOStreams, list *v1alpha1.LockList, allNamespaces, multi bool) error {
	switch f.format() {
	case "", "wide":
		return printTable(s.Out, list.Items, list.ContextErrors, tableOptions{
			wide: f.format() == "wide", noHeaders: f.noHeaders, namespace: allNamespaces,
			color: f.useColor(s.Out), context: multi,
		})
	case "name":
		for _, l := range list.Items {
			if err := printLeaseName(s.Out, l.Namespace, l.Name); err != nil {
				return err
			}
		}
		return nil
	}
	p, err := f.printFlags.ToPrinter()
	if err != nil {
		return err
	}
	return p.PrintObj(list, s.Out)
}

// printOne prints one lock (watch mode) in a machine format.
func (f *outputFlags) printOne(s genericiooptions.IOStreams, l *v1alpha1.Lock) error {
	if f.format() == "name" {
		return printLeaseName(s.Out, l.Namespace, l.Name)
	}
	p, err := f.printFlags.ToPrinter()
	if err != nil {
		return err
	}
	return p.PrintObj(l, s.Out)
}

// printLeaseName prints a lock Lease for -o name as `kubectl get leases
// -o name` does, so that the output feeds kubectl and kubectl captf alike.
func printLeaseName(w io.Writer, namespace, name string) error {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	m.SetGroupVersionKind(coordinationv1.SchemeGroupVersion.WithKind("Lease"))
	return (&printers.NamePrinter{}).PrintObj(m, w)
}

// useColor decides from the real writer and the flag, not from os.Stdout:
// colour only on a terminal, with NO_COLOR unset and TERM not "dumb".
func (f *outputFlags) useColor(w io.Writer) bool {
	switch f.color {
	case colorAlways:
		return true
	case colorNever:
		return false
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	file, ok := w.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
