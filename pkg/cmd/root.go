// Package cmd wires kubectl captf's commands: flags in, engine calls, output
// out. The domain logic lives in the pkg/ packages it calls.
package cmd

import (
	"flag"

	"github.com/captf-io/kubectl-captf/pkg/version"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// NewCmdCaptf is the root command, `kubectl captf`. Its persistent flags are
// cli-runtime's ConfigFlags, so every subcommand takes --kubeconfig,
// --context, -n, --as, --request-timeout and the TLS flags as kubectl does.
func NewCmdCaptf(streams genericiooptions.IOStreams) *cobra.Command {
	cmd, _ := newRoot(streams, nil)
	return cmd
}

// newRoot builds the command tree. f is the factory the commands use; nil
// builds it from the kubeconfig flags (tests give one built on fakes).
func newRoot(streams genericiooptions.IOStreams, f *factory) (*cobra.Command, *requestCounter) {
	flags := genericclioptions.NewConfigFlags(true)
	counter := newRequestCounter()
	var wrap func(*rest.Config) *rest.Config
	if counter != nil {
		flags.WrapConfigFn, wrap = counter.wrap, counter.wrap
	}
	if f == nil {
		f = newFactory(flags, wrap)
	}
	f.flags = flags
	cmd := &cobra.Command{
		Use:   "captf",
		Short: "See and safely clear the Terraform/OpenTofu state locks of CAPTF",
		Long: `kubectl captf shows the Terraform/OpenTofu state locks of CAPTF (Cluster API
Provider Terraform) and says, by CAPTF's own rules, whether the controller will
clear each one by itself. The verdicts follow the rules of CAPTF ` + version.CAPTFRules + `
(its controller source is the authority).

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
	addVerbosityFlag(cmd)
	cmd.AddCommand(NewCmdLocks(f, streams), NewCmdExplain(f, streams), NewCmdUnlock(f, streams), NewCmdVersion(streams), NewCmdCompletion(streams))
	registerGlobalFlagCompletion(cmd, f.getter)
	return cmd, counter
}

// addVerbosityFlag adds kubectl's -v/--v: klog stays quiet unless asked,
// and -v=6 traces every API request as kubectl's does.
func addVerbosityFlag(cmd *cobra.Command) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	v := pflag.PFlagFromGoFlag(fs.Lookup("v"))
	v.Shorthand = "v"
	cmd.PersistentFlags().AddFlag(v)
}
