package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/captf-io/kubectl-captf/pkg/version"
)

// versionDoc is the version as the printers take it. Like `kubectl version
// -o json` it prints a plain document, not an API object: its kind lives
// outside its JSON, only so that cli-runtime's printers accept it.
type versionDoc struct{ version.Info }

var versionKind = &metav1.TypeMeta{APIVersion: "captf.io/v1alpha1", Kind: "Version"}

func (*versionDoc) GetObjectKind() schema.ObjectKind { return versionKind }

func (d *versionDoc) DeepCopyObject() runtime.Object { c := *d; return &c }

// NewCmdVersion is `kubectl captf version`.
func NewCmdVersion(streams genericiooptions.IOStreams) *cobra.Command {
	print := newPrintFlags(func(bool) printers.ResourcePrinter {
		return printers.ResourcePrinterFunc(func(obj runtime.Object, w io.Writer) error {
			v := obj.(*versionDoc)
			_, err := fmt.Fprintf(w, "kubectl-captf %s (commit %s, built %s, %s)\ncaptf rules: %s\n", v.Version, v.Commit, v.Date, v.GoVersion, v.CAPTFRules)
			return err
		})
	}, "json", "yaml")
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version, commit, build date and Go version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			p, err := print.ToPrinter()
			if err != nil {
				return err
			}
			return p.PrintObj(&versionDoc{version.Get()}, streams.Out)
		},
	}
	print.addFlags(cmd)
	return cmd
}
