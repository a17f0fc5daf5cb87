package inspect

import (
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// ForConfig builds an Inspector's clients from one rest.Config, with one
// policy: 50 requests a second (burst 100) unless the config sets its own,
// since client-go's default of 5 would make a cluster with many stale
// locks crawl, and the server's priority and fairness still guards it;
// built-in types as protobuf, several times cheaper to decode than JSON
// for tens of thousands of Leases and pods. CRDs stay JSON.
func ForConfig(cfg *rest.Config) (*Inspector, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	typed := rest.CopyConfig(cfg)
	typed.ContentType = "application/vnd.kubernetes.protobuf"
	typed.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	kube, err := kubernetes.NewForConfig(typed)
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
	return &Inspector{Client: kube, Metadata: meta, Dynamic: dyn}, nil
}
