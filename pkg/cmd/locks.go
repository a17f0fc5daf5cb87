package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
)

const locksExample = `  # Every CAPTF state lock in the current namespace, with its verdict
  kubectl captf locks

  # In every namespace, with lock IDs, versions, active Jobs and reasons
  kubectl captf locks -A -o wide

  # Only the stale ones, as names
  kubectl captf locks -A -o jsonpath='{range .items[?(@.verdict=="Stale")]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}'`

// LocksOptions are the options of `kubectl captf locks`.
type LocksOptions struct {
	configFlags *genericclioptions.ConfigFlags
	output      *outputFlags

	AllNamespaces bool
	Selector      string
	AllWorkspaces bool

	namespace string
	inspector *inspect.Inspector
	genericiooptions.IOStreams
}

// NewCmdLocks is `kubectl captf locks`.
func NewCmdLocks(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &LocksOptions{configFlags: flags, output: newOutputFlags(), IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "locks",
		Short: "List CAPTF's state locks and whether CAPTF clears each by itself",
		Long: `List every Terraform/OpenTofu state lock (Lease lock-tfstate-default-*), its
holder, the CAPTF object it belongs to, and a verdict by CAPTF's own rules:

  Unlocked  nobody holds the lock
  Live      held by one of the object's own runner pods, which is alive
  Stale     held by one of the object's own runner pods, which is gone or
            finished; CAPTF clears it with the object's next Job
  Foreign   held by anyone else (a workstation, another object's pod);
            CAPTF never clears it
  Unknown   held, but the holder cannot be identified; CAPTF never clears it`,
		Example: locksExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List the locks in every namespace.")
	f.StringVarP(&o.Selector, "selector", "l", "", "Label selector on the lock Leases (e.g. cluster.x-k8s.io/cluster-name=prod).")
	f.BoolVar(&o.AllWorkspaces, "all-workspaces", false, "List every lock-tfstate-* Lease, not only workspace \"default\", the only one CAPTF uses.")
	o.output.addFlags(cmd)
	return cmd
}

// Complete reads the namespace and builds the clients.
func (o *LocksOptions) Complete() error {
	ns, _, err := o.configFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return err
	}
	if !o.AllNamespaces {
		o.namespace = ns
	}
	o.inspector, err = newInspector(o.configFlags)
	return err
}

// Validate checks the output flags.
func (o *LocksOptions) Validate() error {
	return o.output.validate()
}

// Run lists, classifies and prints.
func (o *LocksOptions) Run(ctx context.Context) error {
	rep, err := o.inspector.Locks(ctx, inspect.Scope{Namespace: o.namespace, Selector: o.Selector, AllWorkspaces: o.AllWorkspaces})
	if err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(o.ErrOut, "Warning: %s\n", w)
	}
	if len(rep.Results) == 0 && o.output.human() {
		if o.namespace == "" {
			fmt.Fprintln(o.ErrOut, "No resources found")
		} else {
			fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", o.namespace)
		}
		return nil
	}
	return o.output.print(o.IOStreams, rep.Results, o.namespace == "")
}
