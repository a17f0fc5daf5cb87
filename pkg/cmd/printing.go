package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/encode"
	"github.com/captf-io/kubectl-captf/pkg/escape"
)

// printFlags are one command's -o: cli-runtime's PrintFlags serve json,
// yaml, name, jsonpath and go-template, and the command's own printer
// serves its human output (the default and, for locks, wide). Every
// command prints through the printer ToPrinter returns, and through
// nothing else.
type printFlags struct {
	*genericclioptions.PrintFlags
	// formats are the -o values the command takes, besides the default.
	formats []string
	// human is the command's printer for a reader; wide is -o wide.
	human func(wide bool) printers.ResourcePrinter
	// asName turns an object into what -o name names: Leases, as
	// `kubectl get leases -o name` prints them, so that the names feed
	// kubectl and kubectl captf alike.
	asName func(runtime.Object) []runtime.Object
}

func newPrintFlags(human func(wide bool) printers.ResourcePrinter, formats ...string) *printFlags {
	return &printFlags{PrintFlags: genericclioptions.NewPrintFlags(""), formats: formats, human: human}
}

// addFlags adds -o with the command's formats, and their completion; a
// command that offers templates also gets cli-runtime's template flags.
func (f *printFlags) addFlags(cmd *cobra.Command) {
	usage := "Output format. One of: (" + strings.Join(f.formats, ", ") + ")."
	if slices.Contains(f.formats, "jsonpath") {
		f.PrintFlags.AddFlags(cmd)
		cmd.Flags().Lookup("output").Usage = usage
	} else {
		cmd.Flags().StringVarP(f.OutputFormat, "output", "o", "", usage)
	}
	_ = cmd.RegisterFlagCompletionFunc("output", completeValues(f.formats...))
}

func (f *printFlags) format() string { return *f.OutputFormat }

// isHuman is true for the output meant for a reader, where an empty
// result is said on stderr.
func (f *printFlags) isHuman() bool { return f.format() == "" || f.format() == "wide" }

// ToPrinter returns the printer of the chosen format. It does no I/O, so
// Validate can call it.
func (f *printFlags) ToPrinter() (printers.ResourcePrinter, error) {
	format := f.format()
	if format != "" && !slices.Contains(f.formats, format) && !f.template(format) {
		return nil, fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: %s", format, strings.Join(slices.Sorted(slices.Values(f.formats)), ", "))
	}
	switch {
	case f.isHuman():
		return f.human(format == "wide"), nil
	case format == "json":
		return jsonPrinter{}, nil
	case format == "yaml":
		return &yamlPrinter{}, nil
	}
	p, err := f.PrintFlags.ToPrinter()
	if err != nil {
		return nil, err
	}
	if format != "name" {
		// jsonpath and go-template, whether given inline, with
		// --template or in a file.
		return terminalSafe(p), nil
	}
	return printers.ResourcePrinterFunc(func(obj runtime.Object, w io.Writer) error {
		for _, o := range f.asName(obj) {
			if err := p.PrintObj(o, w); err != nil {
				return err
			}
		}
		return nil
	}), nil
}

// jsonPrinter writes JSON as cli-runtime's JSON printer does (an object
// indented by four spaces, a watch event compact on one line), but with
// no Hidden character raw (encode.JSON), and a LockList item by item.
type jsonPrinter struct{}

func (jsonPrinter) PrintObj(obj runtime.Object, w io.Writer) error {
	var data []byte
	var err error
	switch v := obj.(type) {
	case *v1alpha1.LockList:
		return writeLockList(w, v)
	case *metav1.WatchEvent:
		data, err = json.Marshal(v)
	default:
		if obj.GetObjectKind().GroupVersionKind().Empty() {
			return fmt.Errorf("missing apiVersion or kind of a %T", obj)
		}
		data, err = json.MarshalIndent(obj, "", indent)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(append(encode.JSON(data), '\n'))
	return err
}

// yamlPrinter writes YAML as cli-runtime's YAML printer does, documents
// after the first preceded by "---", but with every string written so that
// it parses back to itself and no Hidden character is raw (encode.YAML).
type yamlPrinter struct{ printed bool }

func (p *yamlPrinter) PrintObj(obj runtime.Object, w io.Writer) error {
	data, err := encode.YAML(obj)
	if err != nil {
		return err
	}
	if p.printed {
		data = append([]byte("---\n"), data...)
	}
	p.printed = true
	_, err = w.Write(data)
	return err
}

// terminalSafe runs a template printer (jsonpath, go-template) on the
// object as it is. To a terminal, which the cluster's text must not
// control, it writes through an escape.Writer: the template's output is
// escaped, line by line and as the table escapes text, so that no function
// of the template (base64decode, printf "%c") can turn a holder's text
// into raw control characters. To a pipe or a file it writes the output as
// the template made it, which is what scripts want.
func terminalSafe(p printers.ResourcePrinter) printers.ResourcePrinter {
	return printers.ResourcePrinterFunc(func(obj runtime.Object, w io.Writer) error {
		if !printers.IsTerminal(w) {
			return p.PrintObj(obj, w)
		}
		e := escape.NewWriter(w)
		err := p.PrintObj(obj, e)
		if ferr := e.Flush(); err == nil {
			err = ferr
		}
		return err
	})
}

// template is true for a jsonpath or go-template format ("jsonpath=...")
// when the command offers that kind of template.
func (f *printFlags) template(format string) bool {
	kind, _, ok := strings.Cut(format, "=")
	return ok && slices.Contains(f.formats, kind)
}

// leaseName is what -o name prints for a lock: its Lease.
func leaseName(namespace, name string) runtime.Object {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	m.SetGroupVersionKind(coordinationv1.SchemeGroupVersion.WithKind("Lease"))
	return m
}

// lossy is true for the formats of cli-runtime that cannot print every
// Lease: KYAML (cli-runtime v0.37's -o kyaml) fails on a string holding
// DEL, a C1 control or a noncharacter ("yaml: control characters are not
// allowed"), which any holder may write into its lock info, so a hostile
// Lease would stop the listing of every lock; it also writes a tab raw
// and replaces invalid UTF-8. JSON and YAML print all of it escaped, and
// parse back to it.
func lossy(format string) bool { return format == "kyaml" }

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
