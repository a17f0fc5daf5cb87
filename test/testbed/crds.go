package testbed

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

//go:embed crds.yaml
var crds []byte

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

func (c *Cluster) installCRDs(ctx context.Context) error {
	cs, err := c.Clients()
	if err != nil {
		return err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(crds), 4096)
	var names []string
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		if len(u.Object) == 0 {
			continue
		}
		if _, err := cs.Dynamic.Resource(crdGVR).Create(ctx, &u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("installing CRD %s: %w", u.GetName(), err)
		}
		names = append(names, u.GetName())
	}
	for _, n := range names {
		if err := waitEstablished(ctx, cs.Dynamic, n); err != nil {
			return err
		}
	}
	return nil
}

func waitEstablished(ctx context.Context, d dynamic.Interface, name string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		u, err := d.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("CRD %s was not established in time", name)
}
