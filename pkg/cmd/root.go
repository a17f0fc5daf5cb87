// Package cmd wires kubectl captf's commands: flags in, engine calls, output
// out. The domain logic lives in the pkg/ packages it calls.
package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
)

// NewCmdCaptf is the root command, `kubectl captf`. Its persistent flags are
// cli-runtime's ConfigFlags, so every subcommand takes --kubeconfig,
// --context, -n, --as, --request-timeout and the TLS flags as kubectl does.
func NewCmdCaptf(streams genericiooptions.IOStreams) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	cmd := &cobra.Command{
		Use:   "captf",
		Short: "See and safely clear the Terraform/OpenTofu state locks of CAPTF",
		Long: `kubectl captf shows the Terraform/OpenTofu state locks of CAPTF (Cluster API
Provider Terraform) and says, by CAPTF's own rules, whether the controller will
clear each one by itself.

Flags go after the plugin name: kubectl captf --context x locks.`,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl captf"},
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(*cobra.Command, []string) {
			// Server warnings as kubectl prints them, not as klog lines.
			rest.SetDefaultWarningHandler(rest.NewWarningWriter(streams.ErrOut, rest.WarningWriterOptions{Deduplicate: true}))
		},
	}
	flags.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(NewCmdLocks(flags, streams), NewCmdExplain(flags, streams), NewCmdUnlock(flags, streams), NewCmdVersion(streams))
	return cmd
}
