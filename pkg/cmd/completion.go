package cmd

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// completionTimeout bounds the cluster reads behind a TAB.
const completionTimeout = 5 * time.Second

// completeTargets completes TYPE/NAME arguments from the cluster: the type
// prefixes first, then the objects of the three kinds in the namespace, or
// the lock Leases after "lease/".
func completeTargets(flags *genericclioptions.ConfigFlags) cobra.CompletionFunc {
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
		ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		in, err := newInspector(flags)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
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
			return out, cobra.ShellCompDirectiveNoFileComp
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
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeValues completes a flag's fixed values.
func completeValues(values ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}
