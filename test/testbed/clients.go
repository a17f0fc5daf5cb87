package testbed

import (
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Clients are the admin's clients of the test-bed.
type Clients struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
}

// Clients connects as the admin.
func (c *Cluster) Clients() (*Clients, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Clients{Kube: kube, Dynamic: dyn}, nil
}
