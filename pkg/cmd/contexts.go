package cmd

import (
	"context"
	"fmt"
	"sort"

	"golang.org/x/sync/errgroup"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

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
	loader := o.factory.getter.ToRawKubeConfigLoader()
	raw, err := loader.RawConfig()
	if err != nil {
		return err
	}
	names := o.Contexts
	if o.AllContexts {
		names = nil
		for name := range raw.Contexts {
			names = append(names, name)
		}
		sort.Strings(names)
	}
	for _, n := range names {
		if _, ok := raw.Contexts[n]; !ok {
			return fmt.Errorf("context %q is not in the kubeconfig", n)
		}
	}
	type scan struct {
		items    []v1alpha1.Lock
		warnings []string
		err      error
	}
	scans := make([]scan, len(names))
	// -n applies to every context; without it each uses its own.
	ns, nsGiven, err := loader.Namespace()
	if err != nil || !nsGiven {
		ns = ""
	}
	var g errgroup.Group
	g.SetLimit(contextScans)
	for i, name := range names {
		g.Go(func() error {
			s := &scans[i]
			s.items, s.warnings, s.err = o.scanContext(ctx, raw, name, ns)
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
			warn(o.ErrOut, "context "+name, []string{s.err.Error()})
			list.ContextErrors = append(list.ContextErrors, v1alpha1.ContextError{Context: name, Error: s.err.Error()})
			continue
		}
		list.Items = append(list.Items, s.items...)
	}
	if len(names) > 0 && len(list.ContextErrors) == len(names) {
		return fmt.Errorf("none of the %d contexts could be read", len(names))
	}
	return nil
}

// scanContext reads one context's locks: its own cluster, credentials and
// namespace (unless -n or -A says otherwise).
func (o *LocksOptions) scanContext(ctx context.Context, raw clientcmdapi.Config, name, namespace string) ([]v1alpha1.Lock, []string, error) {
	cc := clientcmd.NewNonInteractiveClientConfig(raw, name, &clientcmd.ConfigOverrides{}, nil)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, nil, err
	}
	if o.factory.wrap != nil {
		cfg = o.factory.wrap(cfg)
	}
	ns := namespace
	switch {
	case o.AllNamespaces:
		ns = ""
	case ns == "":
		if ns, _, err = cc.Namespace(); err != nil {
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
	in := c.reader
	cctx, cancel := context.WithTimeout(ctx, o.ContextTimeout)
	defer cancel()
	snap, err := in.Read(cctx, o.scope(ns))
	if err != nil {
		return nil, nil, err
	}
	rep := inspect.Decide(snap)
	var items []v1alpha1.Lock
	for _, r := range rep.Results {
		l := r.Lock()
		l.Context = name
		items = append(items, l)
	}
	return items, rep.Warnings, nil
}
