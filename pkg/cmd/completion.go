package cmd

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/captf-io/kubectl-captf/pkg/escape"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// completionTimeout bounds the cluster reads behind a TAB.
const completionTimeout = 5 * time.Second

// completeTargets completes TYPE/NAME arguments from the cluster: the type
// prefixes first, then the objects of the three kinds in the namespace, or
// the lock Leases after "lease/".
func completeTargets(f *factory) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		prefixes := []string{"lease/"}
		for _, k := range object.Kinds {
			prefixes = append(prefixes, strings.ToLower(k.Name)+"/")
		}
		typ, _, hasSlash := strings.Cut(toComplete, "/")
		if !hasSlash {
			return prefixes, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
		ns, err := f.namespace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		c, err := f.Clients()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		in := c.reader
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		var out []cobra.Completion
		if typ == "lease" {
			leases, err := in.Client.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, cobra.ShellCompDirectiveError
			}
			for _, l := range leases.Items {
				if inspect.IsLockLease(l.Name) {
					out = append(out, "lease/"+l.Name)
				}
			}
			return safe(out), cobra.ShellCompDirectiveNoFileComp
		}
		for _, k := range object.Kinds {
			if typ != strings.ToLower(k.Name) {
				continue
			}
			list, err := in.Metadata.Resource(k.GVR()).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, cobra.ShellCompDirectiveError
			}
			for _, m := range list.Items {
				out = append(out, typ+"/"+m.Name)
			}
		}
		return safe(out), cobra.ShellCompDirectiveNoFileComp
	}
}

// safe leaves out the candidates that hold characters a terminal would
// act on or not show (escape.Safe): a shell prints candidates as they are
// when it lists several, and one that must be escaped to be seen cannot be
// typed back either. Kubeconfig names are anyone's text.
func safe(candidates []cobra.Completion) []cobra.Completion {
	out := candidates[:0:0]
	for _, c := range candidates {
		// kubectl's bash completion passes candidates to compgen -W,
		// which expands $(...), backquotes and backslashes: a kubeconfig
		// name holding one would run as a command at <TAB>.
		if escape.Safe(c) && !strings.ContainsAny(c, "$`\\") {
			out = append(out, c)
		}
	}
	return out
}

// completeValues completes a flag's fixed values.
func completeValues(values ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// binaryName is the plugin's executable, the command the completion scripts
// are for: the root command's Use is "captf" so that help reads
// "kubectl captf", but no command named captf exists.
const binaryName = "kubectl-captf"

// completionShells are the shells `completion` writes scripts for, with
// how to load each.
var completionShells = []struct {
	name, load string
	gen        func(root *cobra.Command, w io.Writer, descriptions bool) error
}{
	{"bash", `Needs the bash-completion package. In this shell:

  source <(kubectl-captf completion bash)

For every new shell:

  kubectl-captf completion bash > ~/.local/share/bash-completion/completions/kubectl-captf`,
		func(root *cobra.Command, w io.Writer, d bool) error { return root.GenBashCompletionV2(w, d) }},
	{"zsh", `In this shell (with compinit loaded):

  source <(kubectl-captf completion zsh)

For every new shell, into a directory on $fpath:

  kubectl-captf completion zsh > "${fpath[1]}/_kubectl-captf"`,
		func(root *cobra.Command, w io.Writer, d bool) error {
			if d {
				return root.GenZshCompletion(w)
			}
			return root.GenZshCompletionNoDesc(w)
		}},
	{"fish", `In this shell:

  kubectl-captf completion fish | source

For every new shell:

  kubectl-captf completion fish > ~/.config/fish/completions/kubectl-captf.fish`,
		func(root *cobra.Command, w io.Writer, d bool) error { return root.GenFishCompletion(w, d) }},
	{"powershell", `In this shell:

  kubectl-captf completion powershell | Out-String | Invoke-Expression

For every new shell, add that line to your PowerShell profile.`,
		func(root *cobra.Command, w io.Writer, d bool) error {
			if d {
				return root.GenPowerShellCompletionWithDesc(w)
			}
			return root.GenPowerShellCompletion(w)
		}},
}

// NewCmdCompletion is `completion bash|zsh|fish|powershell`. It replaces
// cobra's default command, whose scripts are for a command named after the
// root's Use ("captf").
func NewCmdCompletion(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "completion",
		Short: "Print the shell completion script for kubectl-captf",
		Long: `Print a completion script for bash, zsh, fish or powershell.

kubectl captf <TAB> (through kubectl, 1.26 and later) needs no script from
here: kubectl completes a plugin's arguments by running the executable
kubectl_complete-captf from PATH, a shim that runs
kubectl-captf __complete "$@". Put the shim from the release archive (or the
repository root) on PATH beside kubectl-captf, and load kubectl's own
completion (kubectl completion bash|zsh|fish|powershell).

The scripts printed here complete the binary run by its own name,
kubectl-captf <TAB>.

Subcommands, flag values (-o, --color), object names (explain, unlock),
namespaces (-n, from the cluster) and kubeconfig names (--context,
--contexts, --cluster, --user) complete either way.`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	for _, sh := range completionShells {
		var noDesc bool
		sub := &cobra.Command{
			Use:   sh.name,
			Short: "Print the completion script for " + sh.name,
			Long: fmt.Sprintf("Print the completion script for %s, for the command kubectl-captf.\n\n%s\n\n"+
				"For kubectl captf <TAB>, put the kubectl_complete-captf shim on PATH instead\n(see kubectl captf completion --help).", sh.name, sh.load),
			Args:              cobra.NoArgs,
			ValidArgsFunction: cobra.NoFileCompletions,
			RunE: func(c *cobra.Command, _ []string) error {
				return writeCompletion(c.Root(), streams.Out, sh.gen, !noDesc)
			},
		}
		sub.Flags().BoolVar(&noDesc, "no-descriptions", false, "Leave out the completions' descriptions.")
		cmd.AddCommand(sub)
	}
	return cmd
}

// writeCompletion writes a script for the command kubectl-captf: the root
// is named after the binary only while the script is generated, so help
// and errors keep saying "kubectl captf".
func writeCompletion(root *cobra.Command, w io.Writer, gen func(*cobra.Command, io.Writer, bool) error, descriptions bool) error {
	use := root.Use
	root.Use = binaryName
	defer func() { root.Use = use }()
	return gen(root, w, descriptions)
}

// registerGlobalFlagCompletion completes the connection flags as kubectl's
// registerCompletionFuncForGlobalFlags does: -n from the cluster's
// namespaces, --context, --cluster and --user from the kubeconfig; and
// every --contexts list (locks) from the kubeconfig's contexts.
func registerGlobalFlagCompletion(root *cobra.Command, flags genericclioptions.RESTClientGetter) {
	_ = root.RegisterFlagCompletionFunc("namespace", completeNamespaces(flags))
	_ = root.RegisterFlagCompletionFunc("context", completeKubeconfig(flags, contextNames))
	_ = root.RegisterFlagCompletionFunc("cluster", completeKubeconfig(flags, clusterNames))
	_ = root.RegisterFlagCompletionFunc("user", completeKubeconfig(flags, userNames))
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.LocalNonPersistentFlags().Lookup("contexts") != nil {
			_ = c.RegisterFlagCompletionFunc("contexts", completeContextList(flags))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeNamespaces lists the cluster's namespaces, as kubectl's -n does.
// A cluster that cannot be read completes nothing.
func completeNamespaces(flags genericclioptions.RESTClientGetter) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, err := flags.ToRESTConfig()
		if err != nil {
			cobra.CompDebugln(err.Error(), false)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			cobra.CompDebugln(err.Error(), false)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		list, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			cobra.CompDebugln(err.Error(), false)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, ns := range list.Items {
			if strings.HasPrefix(ns.Name, toComplete) {
				out = append(out, ns.Name)
			}
		}
		return safe(out), cobra.ShellCompDirectiveNoFileComp
	}
}

// kubeconfigNames picks one kind of name out of a kubeconfig.
type kubeconfigNames func(flags genericclioptions.RESTClientGetter) ([]string, error)

func contextNames(flags genericclioptions.RESTClientGetter) ([]string, error) {
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	return sortedKeys(raw.Contexts), err
}

func clusterNames(flags genericclioptions.RESTClientGetter) ([]string, error) {
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	return sortedKeys(raw.Clusters), err
}

func userNames(flags genericclioptions.RESTClientGetter) ([]string, error) {
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	return sortedKeys(raw.AuthInfos), err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// completeKubeconfig completes one kind of kubeconfig name (the kubeconfig
// of --kubeconfig or $KUBECONFIG, as every command reads it).
func completeKubeconfig(flags genericclioptions.RESTClientGetter, names kubeconfigNames) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		all, err := names(flags)
		if err != nil {
			cobra.CompDebugln(err.Error(), false)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, n := range all {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return safe(out), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeContextList completes a comma-separated list of contexts: the
// last element, after the ones already given, which are not offered again.
func completeContextList(flags genericclioptions.RESTClientGetter) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		all, err := contextNames(flags)
		if err != nil {
			cobra.CompDebugln(err.Error(), false)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		prefix, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			prefix, last = toComplete[:i+1], toComplete[i+1:]
		}
		given := map[string]bool{}
		for _, g := range strings.Split(prefix, ",") {
			given[g] = true
		}
		var out []cobra.Completion
		for _, n := range all {
			if !given[n] && strings.HasPrefix(n, last) {
				out = append(out, prefix+n)
			}
		}
		return safe(out), cobra.ShellCompDirectiveNoFileComp
	}
}
