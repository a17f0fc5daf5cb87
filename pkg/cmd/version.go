package cmd

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/captf-io/kubectl-captf/pkg/version"
)

// NewCmdVersion is `kubectl captf version`. Like `kubectl version -o json`
// it prints a plain document, not an API object.
func NewCmdVersion(streams genericiooptions.IOStreams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version, commit, build date and Go version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := version.Get()
			switch output {
			case "":
				_, err := fmt.Fprintf(streams.Out, "kubectl-captf %s (commit %s, built %s, %s)\ncaptf rules: %s\n", v.Version, v.Commit, v.Date, v.GoVersion, v.CAPTFRules)
				return err
			case "json":
				b, err := json.MarshalIndent(v, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(streams.Out, string(b))
				return err
			case "yaml":
				b, err := yaml.Marshal(v)
				if err != nil {
					return err
				}
				_, err = streams.Out.Write(b)
				return err
			}
			return fmt.Errorf("--output must be json or yaml, not %q", output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format. One of: (json, yaml).")
	_ = cmd.RegisterFlagCompletionFunc("output", completeValues("json", "yaml"))
	return cmd
}
