package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
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
	// Watch prints changes after the list; WatchEvents adds their type.
	Watch       bool
	WatchEvents bool
	// Contexts and AllContexts scan several clusters of the kubeconfig.
	Contexts       []string
	AllContexts    bool
	ContextTimeout time.Duration

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
	f.BoolVarP(&o.Watch, "watch", "w", false, "After listing, watch the locks and print each one whose verdict, holder or reason changes.")
	f.BoolVar(&o.WatchEvents, "output-watch-events", false, "With --watch, print the event type (ADDED, MODIFIED, DELETED) of each change.")
	f.StringSliceVar(&o.Contexts, "contexts", nil, "Scan these kubeconfig contexts concurrently (comma-separated); adds a CONTEXT column.")
	f.BoolVar(&o.AllContexts, "all-contexts", false, "Scan every context of the kubeconfig concurrently; adds a CONTEXT column.")
	f.DurationVar(&o.ContextTimeout, "context-timeout", 30*time.Second, "With --contexts or --all-contexts, how long each cluster may take.")
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
	if o.multi() {
		return nil // each context gets its own clients
	}
	o.inspector, err = newInspector(o.configFlags)
	return err
}

func (o *LocksOptions) multi() bool { return len(o.Contexts) > 0 || o.AllContexts }

// Validate checks the flags.
func (o *LocksOptions) Validate() error {
	if len(o.Contexts) > 0 && o.AllContexts {
		return fmt.Errorf("give --contexts or --all-contexts, not both")
	}
	if o.Watch && o.multi() {
		return fmt.Errorf("--watch follows one cluster; it does not go with --contexts or --all-contexts")
	}
	if o.WatchEvents && !o.Watch {
		return fmt.Errorf("--output-watch-events goes with --watch")
	}
	if o.multi() && o.configFlags.Context != nil && *o.configFlags.Context != "" {
		return fmt.Errorf("--context names one cluster; --contexts and --all-contexts name several")
	}
	return o.output.validate()
}

// Run lists, classifies and prints.
func (o *LocksOptions) Run(ctx context.Context) error {
	if o.Watch {
		return o.runWatch(ctx)
	}
	list := v1alpha1.NewLockList()
	if o.multi() {
		if err := o.scanContexts(ctx, list); err != nil {
			return err
		}
	} else {
		rep, err := o.inspector.Locks(ctx, o.scope(o.namespace))
		if err != nil {
			return err
		}
		warn(o.ErrOut, rep.Warnings)
		for _, r := range rep.Results {
			list.Items = append(list.Items, r.Lock())
		}
	}
	if len(list.Items) == 0 && len(list.ContextErrors) == 0 && o.output.human() {
		if o.namespace == "" || o.multi() {
			fmt.Fprintln(o.ErrOut, "No resources found")
		} else {
			fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", o.namespace)
		}
		return nil
	}
	return o.output.print(o.IOStreams, list, o.AllNamespaces, o.multi())
}

func (o *LocksOptions) scope(namespace string) inspect.Scope {
	return inspect.Scope{Namespace: namespace, Selector: o.Selector, AllWorkspaces: o.AllWorkspaces}
}
