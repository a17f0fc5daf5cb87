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
			"metadata": obj{"name": fmt.Sprintf("obj-%05d", n), "namespace": "team-000", "uid": "9a9310d4-2927-4432-9237-a2fd241f57fa",
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

// Names read from every item, as listObjects does: encoding/json's
// decoder, then the metadata decoded case-sensitively.
func BenchmarkJSONItems(b *testing.B) {
	body := objectListBody(b)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		n := 0
		err := jsonItems(bufio.NewReader(bytes.NewReader(body)), func(item []byte, _ bool) error {
			var m itemMeta
			n++
			return kjson.UnmarshalCaseSensitivePreserveInts(item, &m)
		})
		if err != nil || n != 3333 {
			b.Fatal(n, err)
		}
	}
}
