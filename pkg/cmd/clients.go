package cmd

import (
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
)

// newInspector builds the engine's clients from the kubeconfig flags.
func newInspector(flags *genericclioptions.ConfigFlags) (*inspect.Inspector, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &inspect.Inspector{Client: client, Metadata: meta}, nil
}
