package cmd

import (
	"context"
	"fmt"
	"strings"
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

  # Only the stale and foreign ones, as names
  kubectl captf locks -A --verdict Stale,Foreign -o name

  # The oldest lock first
  kubectl captf locks -A --sort-by=.lock.created`

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
	// Verdicts keeps only the locks of these verdicts (--verdict).
	Verdicts []string
	// SortBy is a JSONPath over a LockList item, as kubectl's --sort-by.
	SortBy string

	namespace string
	filter    verdictFilter
	// verdictSet: --verdict was given, perhaps with nothing in it.
	verdictSet bool
	sorter     *lockSorter
	inspector  *inspect.Inspector
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
			o.verdictSet = cmd.Flags().Changed("verdict")
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
	f.StringSliceVar(&o.Verdicts, "verdict", nil, "Keep only the locks of these verdicts (comma-separated or repeated): "+strings.Join(verdictNames(), ", ")+".")
	f.StringVar(&o.SortBy, "sort-by", "", "Sort the locks by this JSONPath over a LockList item, as kubectl get --sort-by does (e.g. '.lock.created' for the oldest lock first, '.metadata.name', '.verdict'). With --watch, only the first list is sorted.")
	_ = cmd.RegisterFlagCompletionFunc("verdict", completeValues(verdictNames()...))
	_ = cmd.RegisterFlagCompletionFunc("sort-by", completeValues(".lock.created", ".metadata.name", ".metadata.namespace", ".verdict", ".object.name", ".lock.who"))
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
	var err error
	if o.verdictSet && len(o.Verdicts) == 0 {
		o.Verdicts = []string{""} // --verdict "": not a verdict
	}
	if o.filter, err = parseVerdicts(o.Verdicts); err != nil {
		return err
	}
	if o.sorter, err = newLockSorter(o.SortBy); err != nil {
		return err
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
	list.Items = o.filter.filter(list.Items)
	if err := o.sorter.sort(list.Items); err != nil {
		return err
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
