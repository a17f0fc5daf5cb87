package cmd

import (
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
)

// clients are what the commands talk to the cluster with.
type clients struct {
	inspector *inspect.Inspector
	dynamic   dynamic.Interface
	metadata  metadata.Interface
}

// newClients builds every client from the kubeconfig flags.
func newClients(flags *genericclioptions.ConfigFlags) (*clients, error) {
	in, err := newInspector(flags)
	if err != nil {
		return nil, err
	}
	return &clients{inspector: in, dynamic: in.Dynamic, metadata: in.Metadata}, nil
}

// newInspector builds the engine's clients from the kubeconfig flags.
func newInspector(flags *genericclioptions.ConfigFlags) (*inspect.Inspector, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return newInspectorFor(cfg)
}

// newInspectorFor builds the engine's clients from a rest.Config.
func newInspectorFor(cfg *rest.Config) (*inspect.Inspector, error) {
	// client-go's default of 5 requests a second would make the holder-pod
	// GETs of a cluster with many stale locks crawl; the server's priority
	// and fairness still guards it.
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	// Built-in types travel as protobuf: decoding tens of thousands of
	// Leases and pods is several times cheaper than JSON.
	typed := rest.CopyConfig(cfg)
	typed.ContentType = "application/vnd.kubernetes.protobuf"
	typed.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	client, err := kubernetes.NewForConfig(typed)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &inspect.Inspector{Client: client, Metadata: meta, Dynamic: dyn}, nil
}
