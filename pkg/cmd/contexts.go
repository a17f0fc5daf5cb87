package cmd

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/captf-io/kubectl-captf/pkg/advice"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
)

// contextScans is how many clusters are read at once.
const contextScans = 4

// scanContexts reads the locks of several kubeconfig contexts concurrently,
// each bounded by --context-timeout. A cluster that cannot be read is a
// warning and a marked row, never the failure of the whole scan, unless
// none could be read.
func (o *LocksOptions) scanContexts(ctx context.Context, list *v1alpha1.LockList) error {
	raw, err := o.factory.flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return err
	}
	names := o.Contexts
	if o.AllContexts {
		names = sortedKeys(raw.Contexts)
	}
	if len(names) == 0 {
		// Nothing read is not all clear: a cron check given a kubeconfig
		// that is missing or empty must fail, not pass.
		return fmt.Errorf("--all-contexts found no context in the kubeconfig: nothing to read")
	}
	for _, n := range names {
		if _, ok := raw.Contexts[n]; !ok {
			return fmt.Errorf("context %q is not in the kubeconfig", n)
		}
	}
	if err := o.checkProxy(raw, names); err != nil {
		return err
	}
	type scan struct {
		items    []v1alpha1.Lock
		warnings []string
		err      error
	}
	scans := make([]scan, len(names))
	var g errgroup.Group
	g.SetLimit(contextScans)
	for i, name := range names {
		g.Go(func() error {
			s := &scans[i]
			s.items, s.warnings, s.err = o.scanContext(ctx, name, len(names) > 1)
			return nil
		})
	}
	_ = g.Wait() // each scan keeps its own error
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, name := range names {
		s := scans[i]
		warn(o.ErrOut, "context "+name, s.warnings)
		if s.err != nil {
			msg := withoutPasswords(s.err.Error())
			warn(o.ErrOut, "context "+name, []string{msg})
			list.ContextErrors = append(list.ContextErrors, v1alpha1.ContextError{Context: name, Error: msg})
			continue
		}
		list.Items = append(list.Items, s.items...)
	}
	if len(names) > 0 && len(list.ContextErrors) == len(names) {
		return fmt.Errorf("none of the %d contexts could be read", len(names))
	}
	return nil
}

// scanContext reads one context's locks as `--context name` would, with
// the other connection flags of the command line: its own cluster,
// credentials and namespace unless a flag says otherwise (-A reads every
// namespace).
//
// With several contexts read at once, an exec credential plugin gets no
// terminal input: plugins of up to contextScans contexts run together,
// and a code typed for one cluster's login could reach another's.
func (o *LocksOptions) scanContext(ctx context.Context, name string, several bool) ([]v1alpha1.Lock, []string, error) {
	flags := contextFlags(o.factory.flags, name)
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, nil, err
	}
	if several && cfg.ExecProvider != nil {
		exec := *cfg.ExecProvider
		exec.StdinUnavailable = true
		exec.StdinUnavailableMessage = "kubectl captf reads several contexts at once; log in to context " + name + " first"
		b := o.factory.advice()
		b.Conn.Context = name
		if a := advice.Run("", b.Kubectl("version")); a.Command != "" {
			exec.StdinUnavailableMessage += " (" + a.Command + ")"
		}
		cfg.ExecProvider = &exec
	}
	ns := ""
	if !o.AllNamespaces {
		if ns, _, err = flags.ToRawKubeConfigLoader().Namespace(); err != nil {
			return nil, nil, err
		}
	}
	build := newClients
	if o.factory.forContext != nil {
		build = o.factory.forContext
	}
	c, err := build(cfg)
	if err != nil {
		return nil, nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, o.ContextTimeout)
	defer cancel()
	snap, err := c.reader.Read(cctx, o.scope(ns))
	if err != nil {
		return nil, nil, err
	}
	rep := inspect.Decide(snap).OfCluster(o.CAPICluster)
	var items []v1alpha1.Lock
	for _, r := range rep.Results {
		l := r.Lock()
		l.Context = name
		items = append(items, l)
	}
	return items, rep.Warnings, nil
}

// contextFlags are the command line's connection flags with --context set
// to name: what `kubectl --context name` builds its configuration from, so
// that cli-runtime applies every flag given (--as, --as-user-extra,
// --request-timeout, --proxy-url, -n, the TLS flags, ...) to each context as kubectl would, and WrapConfigFn
// (the request counter) wraps each. Each context gets flags of its own:
// cli-runtime caches the configuration it loads in them.
func contextFlags(fl *genericclioptions.ConfigFlags, name string) *genericclioptions.ConfigFlags {
	c := genericclioptions.NewConfigFlags(true)
	c.CacheDir, c.KubeConfig = fl.CacheDir, fl.KubeConfig
	c.ClusterName, c.AuthInfoName, c.Namespace = fl.ClusterName, fl.AuthInfoName, fl.Namespace
	c.APIServer, c.TLSServerName, c.Insecure = fl.APIServer, fl.TLSServerName, fl.Insecure
	c.CertFile, c.KeyFile, c.CAFile, c.BearerToken = fl.CertFile, fl.KeyFile, fl.CAFile, fl.BearerToken
	c.Impersonate, c.ImpersonateUID, c.ImpersonateGroup = fl.Impersonate, fl.ImpersonateUID, fl.ImpersonateGroup
	c.ImpersonateUserExtra, c.ProxyURL = fl.ImpersonateUserExtra, fl.ProxyURL
	c.Username, c.Password = fl.Username, fl.Password
	c.Timeout, c.DisableCompression, c.WrapConfigFn = fl.Timeout, fl.DisableCompression, fl.WrapConfigFn
	c.Context = &name
	return c
}

// oneClusterFlags are the connection flags that name one cluster or one
// user's credential. Given with several contexts they would send that
// credential to every cluster, or read one cluster under every context's
// name, so they are refused then; with one context they apply, as with
// --context. (The plugin has no --username or --password: cli-runtime adds
// those only when asked.)
var oneClusterFlags = []struct{ flag, names string }{
	{"server", "one cluster's API server"},
	{"cluster", "one cluster of the kubeconfig"},
	{"certificate-authority", "one cluster's certificate authority"},
	{"tls-server-name", "one cluster's server certificate"},
	{"user", "one cluster's credential (a kubeconfig user)"},
	{"token", "one cluster's credential"},
	{"client-certificate", "one cluster's credential"},
	{"client-key", "one cluster's credential"},
}

// givenOneClusterFlags are the oneClusterFlags given on the command line.
func givenOneClusterFlags(cmd *cobra.Command) []string {
	var given []string
	for _, f := range oneClusterFlags {
		if cmd.Flags().Changed(f.flag) {
			given = append(given, f.flag)
		}
	}
	return given
}

// validateContexts checks what --contexts and --all-contexts take: no
// flag that names one cluster when several are read, and no -o name, whose
// Lease names do not say which cluster they are in (the same object in two
// clusters has a Lease of the same name).
func (o *LocksOptions) validateContexts() error {
	if !o.multi() {
		return nil
	}
	scan := "--contexts"
	if o.AllContexts {
		scan = "--all-contexts"
	}
	if o.AllContexts || len(o.Contexts) > 1 {
		what := scan
		if !o.AllContexts {
			what = fmt.Sprintf("--contexts of %d contexts", len(o.Contexts))
		}
		for _, f := range oneClusterFlags {
			if slices.Contains(o.oneClusterGiven, f.flag) {
				return fmt.Errorf("--%s cannot be used with %s: it names %s; read that context alone (--context)", f.flag, what, f.names)
			}
		}
	}
	if o.print.format() == "name" {
		return fmt.Errorf("-o name cannot be used with %s: a Lease name does not say its cluster, and the same object in two clusters has a Lease of the same name; use -o json, or -o jsonpath='%s'", scan, contextNamesJSONPath)
	}
	return nil
}

// checkProxy refuses a --proxy-url that would replace the proxy-url of a
// context's own cluster when several contexts are read: the clusters of a
// kubeconfig reached through proxies of their own (bastions) may share a
// server name, and one proxy would then take every context to the same
// cluster, with --insecure-skip-tls-verify even under each context's
// credential. A cluster with no proxy of its own, or the same one, takes
// it, as kubectl --context NAME --proxy-url would.
func (o *LocksOptions) checkProxy(raw clientcmdapi.Config, names []string) error {
	fl := o.factory.flags
	if len(names) < 2 || fl == nil || fl.ProxyURL == nil || *fl.ProxyURL == "" {
		return nil
	}
	for _, n := range names {
		if c := raw.Clusters[raw.Contexts[n].Cluster]; c != nil && c.ProxyURL != "" && c.ProxyURL != *fl.ProxyURL {
			return fmt.Errorf("--proxy-url cannot be used with these %d contexts: context %q reaches its cluster through a proxy-url of its own, which it would replace; read that context alone (--context)", len(names), n)
		}
	}
	return nil
}

// contextNamesJSONPath prints each lock of a scan of several contexts as
// its context, namespace and Lease name, one a line: what -o name cannot.
const contextNamesJSONPath = `{range .items[*]}{.context}{"\t"}{.metadata.namespace}{"\t"}{.metadata.name}{"\n"}{end}`
