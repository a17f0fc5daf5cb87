// Package cluster is the reading layer: it reads from a cluster all that the
// verdicts of its locks depend on (Leases, pods, Jobs, CAPTF objects and
// what their gates read around them) into an inspect.Snapshot, for a scope
// or for one lock, and keeps that current for a watch. It owns the request
// plan (what is read by name, what by list), the streaming decode and the
// retries, and knows nothing of verdicts: package inspect decides them
// from the snapshot, reading nothing.
package cluster

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// Reader reads one cluster.
type Reader struct {
	// Client is the typed clientset; its REST client asks for protobuf,
	// and every list of a built-in type streams through it.
	Client kubernetes.Interface
	// Metadata lists Secrets by metadata only: the plugin never reads
	// their data.
	Metadata metadata.Interface
	// Dynamic reads single CAPTF and Cluster API objects in full.
	Dynamic dynamic.Interface
	// rest streams the lists; it is the typed clientset's REST client.
	rest rest.Interface
	// failFor, when set, replaces lastingFor (tests).
	failFor time.Duration
}

// lastingFor is how long a watch's informer must fail before the watch
// acts on it.
func (r *Reader) lastingFor() time.Duration {
	if r.failFor > 0 {
		return r.failFor
	}
	return lastingFor
}

// ForConfig builds a Reader from one rest.Config, with one policy: 50
// requests a second (burst 100) unless the config sets its own, since
// client-go's default of 5 would make a cluster with many stale locks
// crawl, and the server's priority and fairness still guards it; built-in
// types as protobuf, several times cheaper to decode than JSON for tens of
// thousands of Leases and pods. CRDs stay JSON.
func ForConfig(cfg *rest.Config) (*Reader, error) {
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
	return &Reader{Client: kube, Metadata: meta, Dynamic: dyn, rest: kube.CoreV1().RESTClient()}, nil
}

// readError says which read failed and keeps the server's own message,
// which names the user, verb, resource and namespace of a 403.
func readError(verb, resource, namespace string, err error) error {
	where := "in all namespaces"
	if namespace != "" {
		where = fmt.Sprintf("in namespace %q", namespace)
	}
	return ReadError(verb, resource, resource+" "+where, err)
}

// ReadError is the error of a read of what (the resource and where, or
// the object) that failed: for a refusal it says the permission the
// plugin needs, verb on resource, and for every failure it keeps the
// server's own message.
func ReadError(verb, resource, what string, err error) error {
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("cannot %s %s: you must be logged in to the server (%w)", verb, what, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("cannot %s %s (the plugin needs %s on %s): %w", verb, what, verb, resource, err)
	}
	return fmt.Errorf("cannot %s %s: %w", verb, what, err)
}

// firstError keeps one error of many, so a missing permission is said
// once, in one line.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
