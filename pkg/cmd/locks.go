package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/escape"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
)

// errFound ends `locks --exit-code` after it printed what it found.
var errFound = exitCode(ExitFound)

const locksExample = `  # Every CAPTF state lock in the current namespace, with its verdict
  kubectl captf locks

  # In every namespace, with lock IDs, versions, active Jobs and reasons
  kubectl captf locks -A -o wide

  # Only the stale and foreign ones, as names
  kubectl captf locks -A --verdict Stale,Foreign -o name

  # The oldest lock first
  kubectl captf locks -A --sort-by=.lock.created

  # The locks of Cluster API Cluster prod, in namespace team-a
  kubectl captf locks -n team-a --capi-cluster prod

  # For cron or CI: the Stale, Foreign and Unknown locks held for over 30 minutes;
  # exit 4 if there are any, 0 if there are none
  kubectl captf locks -A --verdict Stale,Foreign,Unknown --older-than 30m --exit-code`

// LocksOptions are the options of `kubectl captf locks`.
type LocksOptions struct {
	factory *factory
	print   *printFlags
	table   tableFlags

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
	// OlderThan keeps only the held locks created longer ago (--older-than).
	OlderThan time.Duration
	// ExitCode exits with ExitFound when any lock is listed (--exit-code).
	ExitCode bool
	// CAPICluster keeps only the locks of this Cluster API Cluster
	// (--capi-cluster), in each namespace read.
	CAPICluster string

	namespace string
	// contextGiven: --context was given, which names one cluster.
	contextGiven bool
	// oneClusterGiven are the oneClusterFlags given, refused when several
	// contexts are read.
	oneClusterGiven []string
	filter          verdictFilter
	// verdictSet: --verdict was given, perhaps with nothing in it;
	// capiClusterSet: --capi-cluster was.
	verdictSet, capiClusterSet bool
	// olderThanSet: --older-than was given (0 keeps every held lock).
	olderThanSet bool
	age          ageFilter
	sorter       *lockSorter
	printer      printers.ResourcePrinter
	clients      *clients
	genericiooptions.IOStreams
}

// NewLocksOptions are the options with their defaults.
func NewLocksOptions(f *factory, streams genericiooptions.IOStreams) *LocksOptions {
	o := &LocksOptions{factory: f, IOStreams: streams, table: tableFlags{color: colorAuto}, ContextTimeout: 30 * time.Second}
	o.print = newPrintFlags(o.tablePrinter)
	o.print.formats = slices.DeleteFunc(dedupe(append([]string{"wide", "name"}, o.print.AllowedFormats()...)), lossy)
	o.print.asName = lockLeaseNames
	return o
}

// NewCmdLocks is `kubectl captf locks`.
func NewCmdLocks(f *factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewLocksOptions(f, streams)
	cmd := &cobra.Command{
		Use:   "locks",
		Short: "List CAPTF's state locks and whether CAPTF clears each by itself",
		Long: `List every Terraform/OpenTofu state lock (Lease lock-tfstate-default-*), its
holder, the CAPTF object it belongs to, and a verdict by CAPTF's own rules:

  Unlocked  nobody holds the lock
  Live      held by one of the object's own runner pods, which is alive
  Stale     held by one of the object's own runner pods, which is gone or
            finished; CAPTF clears it with the object's next Job
  Foreign   held by anyone else (a workstation, another object's pod); no
            Job of CAPTF's clears it
  Unknown   held, but the holder cannot be identified; no Job of CAPTF's
            clears it

On some deletions CAPTF deletes the lock Lease itself, whoever holds it
(deletionPolicy Retain, an externally managed object, the cleanup after a
destroy or of an object without state): -o wide's reason and the JSON field
captfDeletesLease say when.

--capi-cluster NAME keeps the locks of Cluster API Cluster NAME: those whose
object belongs to it, as CAPTF names an object's Cluster (its
cluster.x-k8s.io/cluster-name label, else a TerraformCluster's owner reference
to the Cluster; -o wide's CLUSTER column). A Cluster is
namespaced: with -n (or the context's namespace) it is the Cluster NAME there;
with -A the Clusters named NAME in every namespace; with --contexts or
--all-contexts those of each context. A name no object has lists nothing, as
an unmatched selector does. A lock whose object is gone belongs to no Cluster:
-l cluster.x-k8s.io/cluster-name=NAME selects on the Lease's own label instead.

--older-than keeps only the held locks whose lock info says they were created
longer ago than the duration. A held lock whose creation time cannot be read
(no or unparseable lock info), or is more than 5 minutes ahead of this
machine's clock, is kept: its age is unknown, and a check for old locks must
not miss it. An Unlocked lock has no age and is left out.

--contexts and --all-contexts read each context as --context NAME would, with
the other connection flags given: --kubeconfig, -n, --as, --as-group, --as-uid,
--as-user-extra, --request-timeout, --proxy-url, --insecure-skip-tls-verify,
--disable-compression and --cache-dir apply to every context. The flags that name one cluster or one
credential (--server, --cluster, --user, --token, --client-certificate,
--client-key, --certificate-authority, --tls-server-name) apply when one
context is read, and are an error with several.

-o name prints the Lease of each lock, lease.coordination.k8s.io/NAME, as
kubectl get -o name does: names of one cluster, to give kubectl captf unlock in
that same context and namespace. It is an error with --contexts and
--all-contexts: the same object in two clusters has a Lease of the same name.
Use -o json there, or -o jsonpath with .context, .metadata.namespace and
.metadata.name. With -A the names carry no namespace, but none can be taken
for a CAPTF lock of another namespace: the name hashes the object's namespace.

Exit codes: 0 success, also when nothing is found (said on stderr for the
table); 1 error; 4 with --exit-code when at least one lock is listed; 128 +
the signal when interrupted (130 Ctrl-C). With --exit-code and --contexts or --all-contexts, a context that
cannot be read makes it exit 1 when nothing is found elsewhere: nothing found
is not all clear then.`,
		Example: locksExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.verdictSet = cmd.Flags().Changed("verdict")
			o.capiClusterSet = cmd.Flags().Changed("capi-cluster")
			o.olderThanSet = cmd.Flags().Changed("older-than")
			o.contextGiven = cmd.Flags().Changed("context")
			o.oneClusterGiven = givenOneClusterFlags(cmd)
			return run(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List the locks in every namespace.")
	fl.StringVarP(&o.Selector, "selector", "l", "", "Label selector on the lock Leases (e.g. cluster.x-k8s.io/cluster-name=prod).")
	fl.BoolVar(&o.AllWorkspaces, "all-workspaces", false, "List every lock-tfstate-* Lease, not only workspace \"default\", the only one CAPTF uses.")
	fl.BoolVarP(&o.Watch, "watch", "w", false, "After listing, watch the locks and print each one whose verdict, holder or reason changes.")
	fl.BoolVar(&o.WatchEvents, "output-watch-events", false, "With --watch, print the event type (ADDED, MODIFIED, DELETED) of each change.")
	fl.StringSliceVar(&o.Contexts, "contexts", nil, "Scan these kubeconfig contexts concurrently (comma-separated), each as --context NAME with the other connection flags given; adds a CONTEXT column. Not with -o name; with two or more, not with a flag that names one cluster or one credential (--server, --token, ...: see above).")
	fl.BoolVar(&o.AllContexts, "all-contexts", false, "Scan every context of the kubeconfig concurrently, each as --context NAME with the other connection flags given; adds a CONTEXT column. Not with -o name, nor with a flag that names one cluster or one credential (--server, --token, ...: see above).")
	fl.DurationVar(&o.ContextTimeout, "context-timeout", o.ContextTimeout, "With --contexts or --all-contexts, how long each cluster may take.")
	fl.StringSliceVar(&o.Verdicts, "verdict", nil, "Keep only the locks of these verdicts (comma-separated or repeated): "+strings.Join(verdictNames(), ", ")+".")
	fl.StringVar(&o.SortBy, "sort-by", "", "Sort the locks by this JSONPath over a LockList item, as kubectl get --sort-by does (e.g. '.lock.created' for the oldest lock first, '.metadata.name', '.verdict'). With --watch, only the first list is sorted.")
	fl.DurationVar(&o.OlderThan, "older-than", 0, "Keep only the held locks created longer ago than this Go duration (e.g. 30m, 2h), by their lock info's created time. A held lock whose created time cannot be read, or is over 5m ahead of this clock, is kept; Unlocked locks are left out. Not with --watch.")
	fl.StringVar(&o.CAPICluster, "capi-cluster", "", "Keep only the locks of the objects of this Cluster API Cluster (the CLUSTER of -o wide), in the namespaces read: -n's, or every one with -A. Not kubectl's --cluster, which names a kubeconfig cluster.")
	fl.BoolVar(&o.ExitCode, "exit-code", false, fmt.Sprintf("Exit with code %d when at least one lock is listed, 0 when none is (for cron and CI; 1 stays an error). Not with --watch.", ExitFound))
	_ = cmd.RegisterFlagCompletionFunc("verdict", completeValues(verdictNames()...))
	_ = cmd.RegisterFlagCompletionFunc("sort-by", completeValues(".lock.created", ".metadata.name", ".metadata.namespace", ".verdict", ".object.name", ".lock.who"))
	o.print.addFlags(cmd)
	o.table.addFlags(cmd)
	return cmd
}

// Complete reads the namespace and builds the clients and the printer.
// It talks to no server.
func (o *LocksOptions) Complete() error {
	var err error
	if o.multi() {
		// Each context gets its own namespace and clients (scanContext):
		// the current context is not read, so that a flag it cannot take
		// fails each context, or is refused by Validate, as the flag says.
		o.printer, err = o.print.ToPrinter()
		return err
	}
	if o.namespace, o.printer, err = o.factory.complete(o.print, o.AllNamespaces); err != nil {
		return err
	}
	o.clients, err = o.factory.Clients()
	return err
}

// tablePrinter is the human printer of -o "" and -o wide.
func (o *LocksOptions) tablePrinter(wide bool) printers.ResourcePrinter {
	return &tablePrinter{
		opts:     tableOptions{wide: wide, noHeaders: o.table.noHeaders, namespace: o.AllNamespaces, context: o.multi(), events: o.WatchEvents},
		colorFor: o.table.useColor,
		now:      o.factory.clock,
	}
}

// lockLeaseNames is -o name: the Lease of each lock printed.
func lockLeaseNames(obj runtime.Object) []runtime.Object {
	switch v := obj.(type) {
	case *v1alpha1.LockList:
		var out []runtime.Object
		for _, l := range v.Items {
			out = append(out, leaseName(l.Namespace, l.Name))
		}
		return out
	case *v1alpha1.Lock:
		return []runtime.Object{leaseName(v.Namespace, v.Name)}
	case *metav1.WatchEvent:
		return lockLeaseNames(v.Object.Object)
	}
	return nil
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
	if o.multi() && o.contextGiven {
		return fmt.Errorf("--context names one cluster; --contexts and --all-contexts name several")
	}
	if err := o.validateContexts(); err != nil {
		return err
	}
	if o.Watch && o.ExitCode {
		return fmt.Errorf("--exit-code reports one listing's result; it does not go with --watch, which never ends by itself")
	}
	if o.Watch && o.olderThanSet {
		return fmt.Errorf("--older-than does not go with --watch: a lock grows older without a change for the watch to report")
	}
	var err error
	if o.age, err = newAgeFilter(o.olderThanSet, o.OlderThan, o.factory.clock()); err != nil {
		return err
	}
	if o.verdictSet && len(o.Verdicts) == 0 {
		o.Verdicts = []string{""} // --verdict "": not a verdict
	}
	if o.filter, err = parseVerdicts(o.Verdicts); err != nil {
		return err
	}
	if o.sorter, err = newLockSorter(o.SortBy); err != nil {
		return err
	}
	// Given empty (an unset variable in a script), it would keep every
	// Cluster's locks: an error, as a name no Cluster has.
	if (o.CAPICluster != "" || o.capiClusterSet) && !inspect.ValidName(o.CAPICluster) {
		return fmt.Errorf("--capi-cluster %q is not a Cluster's name: give the name of a Cluster API Cluster, as -o wide's CLUSTER column shows it", o.CAPICluster)
	}
	return o.table.validate()
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
		snap, err := o.clients.reader.Read(ctx, o.scope(o.namespace))
		if err != nil {
			return err
		}
		rep := inspect.Decide(snap).OfCluster(o.CAPICluster)
		warn(o.ErrOut, "", rep.Warnings)
		list.Items = make([]v1alpha1.Lock, 0, len(rep.Results))
		for _, r := range rep.Results {
			list.Items = append(list.Items, r.Lock())
		}
	}
	list.Items = o.age.filter(o.filter.filter(list.Items))
	if err := o.sorter.sort(list.Items); err != nil {
		return err
	}
	if len(list.Items) == 0 && len(list.ContextErrors) == 0 && o.print.isHuman() {
		if o.namespace == "" || o.multi() {
			fmt.Fprintln(o.ErrOut, "No resources found")
		} else {
			fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", escape.Text(o.namespace))
		}
		return nil
	}
	if err := o.printer.PrintObj(list, o.Out); err != nil {
		return err
	}
	return o.exitCode(list)
}

// exitCode is --exit-code's verdict on what was printed: ExitFound when a
// lock is listed; otherwise an error when a context could not be read,
// since nothing found is then not all clear.
func (o *LocksOptions) exitCode(list *v1alpha1.LockList) error {
	switch {
	case !o.ExitCode:
		return nil
	case len(list.Items) > 0:
		return errFound
	case len(list.ContextErrors) > 0:
		names := make([]string, len(list.ContextErrors))
		for i, e := range list.ContextErrors {
			names[i] = e.Context
		}
		return fmt.Errorf("nothing was found, but context %s could not be read: with --exit-code that is not all clear", strings.Join(names, ", "))
	}
	return nil
}

func (o *LocksOptions) scope(namespace string) inspect.Scope {
	return inspect.Scope{Namespace: namespace, Selector: o.Selector, AllWorkspaces: o.AllWorkspaces}
}
