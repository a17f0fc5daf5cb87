package cluster

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	kjson "sigs.k8s.io/json"
)

// objectListBody is a list of 3,333 CAPTF objects shaped as the
// benchmark's (docs/benchmarks.md): a third of what locks -A reads at
// 10,000 locks.
func objectListBody(b *testing.B) []byte {
	type obj map[string]any
	items := make([]obj, 3333)
	for n := range items {
		items[n] = obj{"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "TerraformMachine",
			// Labelled and owned as Cluster API makes them (the Cluster's
			// name is read from them).
			"metadata": obj{"name": fmt.Sprintf("obj-%05d", n), "namespace": "team-000", "uid": "9a9310d4-2927-4432-9237-a2fd241f57fa",
				"labels":          obj{"cluster.x-k8s.io/cluster-name": "prod", "cluster.x-k8s.io/deployment-name": "prod-md-0"},
				"ownerReferences": []obj{{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine", "name": fmt.Sprintf("prod-md-0-%05d", n), "uid": "00000000-0000-0000-0000-00000000c1a5", "controller": true, "blockOwnerDeletion": true}},
				"managedFields": []obj{{"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "fieldsType": "FieldsV1",
					"fieldsV1": obj{"f:metadata": obj{"f:ownerReferences": obj{".": obj{}, `k:{"uid":"00000000-0000-0000-0000-00000000c1a5"}`: obj{}}}},
					"manager":  "bench", "operation": "Update"}}},
			"spec": obj{"source": obj{"image": "registry.example/captf-module:v0.1.0"}}}
	}
	body, err := json.Marshal(obj{"apiVersion": "v1", "kind": "List", "items": items, "metadata": obj{"resourceVersion": "1"}})
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// benchItems reads every item's metadata as listObjects does, with meta.
func benchItems(b *testing.B, meta func([]byte) error) {
	body := objectListBody(b)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		n := 0
		err := jsonItems(bufio.NewReader(bytes.NewReader(body)), func(item []byte, _ bool) error {
			n++
			return meta(item)
		})
		if err != nil || n != 3333 {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkItemMeta: the list's decoder, then the metadata walked out of
// each item (metaOf, what listObjects does) or decoded again with
// sigs.k8s.io/json (what it did before), side by side.
func BenchmarkItemMeta(b *testing.B) {
	b.Run("metaOf", func(b *testing.B) {
		benchItems(b, func(item []byte) error { _, err := metaOf(item); return err })
	})
	b.Run("decode", func(b *testing.B) {
		benchItems(b, func(item []byte) error { var m decodedMeta; return kjson.UnmarshalCaseSensitivePreserveInts(item, &m) })
	})
	b.Run("decoder-only", func(b *testing.B) {
		benchItems(b, func([]byte) error { return nil })
	})
}
