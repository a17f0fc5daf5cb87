package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/unlock"
)

const unlockExample = `  # What would happen (a dry run: nothing is written)
  kubectl captf unlock terraformcluster/demo -n infra

  # Clear a stale lock
  kubectl captf unlock terraformcluster/demo -n infra --confirm

  # Clear a lock held from a workstation, once its holder is gone, naming its ID
  kubectl captf unlock tfm/web-1 --id 3c1e9a5b-7d2f-0e4a-8b6c-1f2e3d4c5b6a --confirm

  # Clear every stale lock in every namespace
  kubectl captf unlock --all-stale -A --confirm`

const unlockLong = `Clear a Terraform/OpenTofu state lock of a CAPTF object, safely.

Without --confirm it is a dry run: it prints the lock, its verdict and exactly
what would be written, and writes nothing. With --confirm it reads the Lease
and the holder pod again, live, classifies the lock again and then:

  Unlocked          says so, writes nothing.
  Stale             unlocks.
  Live              refuses, unless --force: clearing a live runner's lock lets
                    two runs write the same state.
  Foreign, Unknown  refuses, unless --id names the current lock ID (the proof
                    terraform force-unlock asks for). A foreign holder may be
                    mid-write.

An --id that differs from the current lock ID is always refused. The write is
the runtimes' own Unlock: spec.holderIdentity set to null and only the
app.terraform.io/lock-info annotation removed, sent as an update carrying the
resourceVersion read, so a lock that changed in between is never cleared. An
Event (reason OperatorForceUnlocked) records the unlock.

Exit codes: 0 done (or, in a dry run, would be done), 1 error, 3 refused by a
guard or the lock changed while unlocking.`

// UnlockOptions are the options of `kubectl captf unlock`.
type UnlockOptions struct {
	configFlags *genericclioptions.ConfigFlags
	printFlags  *genericclioptions.PrintFlags

	Confirm       bool
	Force         bool
	ID            string
	idGiven       bool
	AllStale      bool
	AllNamespaces bool
	Reconcile     bool

	args      []string
	namespace string
	target    *target
	unlocker  *unlock.Unlocker
	genericiooptions.IOStreams
}

// NewCmdUnlock is `kubectl captf unlock`.
func NewCmdUnlock(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	// Only -o of the print flags: the outcome is json, yaml or names.
	o := &UnlockOptions{configFlags: flags, printFlags: genericclioptions.NewPrintFlags(""), IOStreams: streams}
	cmd := &cobra.Command{
		Use:               "unlock (TYPE/NAME | TYPE NAME | lease/NAME | --all-stale) [--confirm]",
		Short:             "Clear a state lock, refusing live holders and locks that changed",
		Long:              unlockLong,
		Example:           unlockExample,
		ValidArgsFunction: completeTargets(flags),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.args, o.idGiven = args, cmd.Flags().Changed("id")
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
	f.BoolVar(&o.Confirm, "confirm", false, "Write. Without it, print what would be written and write nothing.")
	f.BoolVar(&o.Force, "force", false, "Clear a lock whose holder is one of the object's own runner pods and still alive.")
	f.StringVar(&o.ID, "id", "", "The current lock ID: required to clear a Foreign or Unknown lock, and checked against any lock.")
	f.BoolVar(&o.AllStale, "all-stale", false, "Clear every Stale lock in the namespace (or with -A, everywhere), and nothing else.")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "With --all-stale, every namespace.")
	f.BoolVar(&o.Reconcile, "reconcile", false, "After unlocking, annotate the object with "+unlock.ReconcileAnnotation+" so CAPTF's controller reconciles now (it does not watch Leases).")
	f.StringVarP(o.printFlags.OutputFormat, "output", "o", "", "Output format. One of: (json, yaml, name).")
	_ = cmd.RegisterFlagCompletionFunc("output", completeValues("json", "yaml", "name"))
	return cmd
}

// Complete resolves the argument and builds the clients.
func (o *UnlockOptions) Complete() error {
	ns, _, err := o.configFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return err
	}
	o.namespace = ns
	if o.AllNamespaces {
		o.namespace = ""
	}
	c, err := newClients(o.configFlags)
	if err != nil {
		return err
	}
	o.unlocker = &unlock.Unlocker{Inspector: c.inspector, Client: c.inspector.Client, Dynamic: c.dynamic}
	if len(o.args) > 0 && !o.AllStale {
		o.target, err = resolveTarget(o.configFlags, ns, o.args)
	}
	return err
}

// Validate checks that the flags make one clear request.
func (o *UnlockOptions) Validate() error {
	switch {
	case o.AllStale && len(o.args) > 0:
		return fmt.Errorf("name a lock or give --all-stale, not both")
	case !o.AllStale && len(o.args) == 0:
		return fmt.Errorf("name the lock to clear (TYPE/NAME or lease/NAME), or give --all-stale")
	case o.AllStale && (o.Force || o.idGiven):
		return fmt.Errorf("--all-stale clears only Stale locks: --force and --id name one lock")
	case o.AllNamespaces && !o.AllStale:
		return fmt.Errorf("-A goes with --all-stale")
	}
	switch f := *o.printFlags.OutputFormat; f {
	case "", "json", "yaml", "name":
		return nil
	default:
		return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json, name, yaml", f)
	}
}

// Run unlocks and prints.
func (o *UnlockOptions) Run(ctx context.Context) error {
	opts := unlock.Options{
		Guard:   unlock.Guard{Force: o.Force, ID: o.ID, IDGiven: o.idGiven},
		Confirm: o.Confirm, Reconcile: o.Reconcile,
	}
	var outcomes []*unlock.Outcome
	if o.AllStale {
		rep, err := o.unlocker.Inspector.Locks(ctx, inspect.Scope{Namespace: o.namespace})
		if err != nil {
			return err
		}
		for _, w := range rep.Warnings {
			fmt.Fprintf(o.ErrOut, "Warning: %s\n", w)
		}
		for _, r := range rep.Results {
			if r.Decision.Verdict != v1alpha1.Stale {
				continue
			}
			// Unlock reads and classifies it again before writing.
			out, err := o.unlocker.Unlock(ctx, r.Facts.Lease.Lease.Namespace, r.Facts.Lease.Lease.Name, opts)
			if err != nil {
				return err
			}
			outcomes = append(outcomes, out)
		}
		if len(outcomes) == 0 && *o.printFlags.OutputFormat == "" {
			where := "in any namespace"
			if o.namespace != "" {
				where = "in " + o.namespace + " namespace"
			}
			fmt.Fprintf(o.ErrOut, "No stale locks found %s.\n", where)
		}
	} else {
		out, err := o.unlocker.Unlock(ctx, o.target.Namespace, o.target.Lease, opts)
		if err != nil {
			return err
		}
		outcomes = append(outcomes, out)
	}
	if err := o.print(outcomes); err != nil {
		return err
	}
	for _, out := range outcomes {
		for _, w := range out.Warnings {
			fmt.Fprintf(o.ErrOut, "Warning: %s\n", esc(w))
		}
		if out.Action == v1alpha1.Refused || out.Action == v1alpha1.Conflict {
			return errGuard
		}
	}
	return nil
}

func (o *UnlockOptions) print(outcomes []*unlock.Outcome) error {
	switch *o.printFlags.OutputFormat {
	case "":
		for n, out := range outcomes {
			if n > 0 {
				fmt.Fprintln(o.Out)
			}
			o.printHuman(o.Out, out)
		}
		if o.AllStale && len(outcomes) > 0 {
			fmt.Fprintf(o.Out, "\n%s\n", summary(outcomes))
		}
		return nil
	case "name":
		for _, out := range outcomes {
			if out.Action != v1alpha1.ActionUnlocked && out.Action != v1alpha1.WouldUnlock {
				continue
			}
			l := out.Result.Facts.Lease.Lease
			if err := printLeaseName(o.Out, l.Namespace, l.Name); err != nil {
				return err
			}
		}
		return nil
	}
	p, err := o.printFlags.ToPrinter()
	if err != nil {
		return err
	}
	if !o.AllStale {
		r := outcomes[0].API()
		return p.PrintObj(&r, o.Out)
	}
	list := v1alpha1.NewUnlockResultList()
	for _, out := range outcomes {
		list.Items = append(list.Items, out.API())
	}
	return p.PrintObj(list, o.Out)
}

// printHuman prints one outcome for a reader: the lock, then what happened.
func (o *UnlockOptions) printHuman(w io.Writer, out *unlock.Outcome) {
	r, now := out.Result, time.Now()
	l := r.Facts.Lease
	arg := "lease/" + l.Lease.Name
	obj := "<none>"
	if r.Facts.Owner != nil {
		obj = r.Facts.Owner.Ref.String()
		if o.target == nil || o.target.Object != nil {
			arg = obj
		}
	}
	fmt.Fprintf(w, "Lock:     lease/%s in namespace %s\n", l.Lease.Name, l.Lease.Namespace)
	writeWrapped(w, "Object:   ", obj)
	if l.Held {
		writeWrapped(w, "Holder:   ", esc(unlock.Holder(l, now)))
	}
	writeWrapped(w, "Verdict:  ", string(r.Decision.Verdict)+": "+esc(r.Decision.Reason))
	c := unlock.Change(l.Lease)
	write := fmt.Sprintf("update Lease %s/%s at resourceVersion %s: spec.holderIdentity %q -> null, remove annotation %s; labels, other annotations and other fields unchanged",
		l.Lease.Namespace, l.Lease.Name, c.ResourceVersion, c.HolderIdentity, c.RemoveAnnotation)
	ns := l.Lease.Namespace
	switch out.Action {
	case v1alpha1.WouldUnlock:
		writeWrapped(w, "Would:    ", esc(write))
		fmt.Fprintln(w, "Dry run: nothing was written. To unlock:")
		writeCommand(w, fmt.Sprintf("kubectl captf unlock %s -n %s%s --confirm", arg, ns, o.guardFlags()))
	case v1alpha1.Refused:
		writeWrapped(w, "Refused:  ", esc(out.Message))
		fmt.Fprintln(w, "Nothing was written.")
	case v1alpha1.AlreadyUnlocked:
		fmt.Fprintln(w, "The lock is already free; nothing was written.")
	case v1alpha1.Conflict:
		writeWrapped(w, "Conflict: ", out.Message+". Look again: kubectl captf explain "+arg+" -n "+ns)
	case v1alpha1.ActionUnlocked:
		writeWrapped(w, "Unlocked: ", esc(write))
		if out.Event != "" {
			fmt.Fprintf(w, "Recorded Event %s (reason %s).\n", out.Event, unlock.EventReason)
		}
		switch {
		case out.Reconcile != "":
			fmt.Fprintf(w, "Annotated %s with %s: CAPTF's controller reconciles it now.\n", obj, out.Reconcile)
		case r.Facts.Owner != nil && r.Facts.Owner.Exists != nil && *r.Facts.Owner.Exists:
			writeWrapped(w, "", "CAPTF's controller does not watch Leases; it sees the free lock at its next reconcile. To trigger one now:")
			writeCommand(w, fmt.Sprintf("kubectl annotate %s -n %s %s=%s --overwrite", obj, ns, unlock.ReconcileAnnotation, now.UTC().Format(time.RFC3339)))
		}
	}
}

// guardFlags repeats the guard flags given, for the printed next command.
func (o *UnlockOptions) guardFlags() string {
	var s []string
	if o.Force {
		s = append(s, "--force")
	}
	if o.idGiven {
		s = append(s, "--id "+esc(unlock.QuoteID(o.ID)))
	}
	if o.Reconcile {
		s = append(s, "--reconcile")
	}
	if len(s) == 0 {
		return ""
	}
	return " " + strings.Join(s, " ")
}

func summary(outcomes []*unlock.Outcome) string {
	counts := map[v1alpha1.Action]int{}
	for _, o := range outcomes {
		counts[o.Action]++
	}
	var parts []string
	for _, a := range []v1alpha1.Action{v1alpha1.ActionUnlocked, v1alpha1.WouldUnlock, v1alpha1.AlreadyUnlocked, v1alpha1.Refused, v1alpha1.Conflict} {
		if counts[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[a], strings.ToLower(string(a))))
		}
	}
	return fmt.Sprintf("%d stale lock(s): %s.", len(outcomes), strings.Join(parts, ", "))
}
