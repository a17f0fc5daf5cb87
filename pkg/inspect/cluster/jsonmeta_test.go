package cluster

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kjson "sigs.k8s.io/json"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
)

// decodedMeta is the decode metaOf stands for: the four fields, read
// case-sensitively by the decoder Kubernetes reads objects with.
type decodedMeta struct {
	Metadata struct {
		Namespace         string                  `json:"namespace"`
		Name              string                  `json:"name"`
		UID               types.UID               `json:"uid"`
		DeletionTimestamp *metav1.Time            `json:"deletionTimestamp"`
		Labels            map[string]string       `json:"labels"`
		OwnerReferences   []metav1.OwnerReference `json:"ownerReferences"`
	} `json:"metadata"`
}

// decodeMeta is metaOf's oracle.
func decodeMeta(b []byte) (itemMeta, error) {
	var d decodedMeta
	err := kjson.UnmarshalCaseSensitivePreserveInts(b, &d)
	m := d.Metadata
	return itemMeta{Namespace: m.Namespace, Name: m.Name, UID: m.UID, Deleting: m.DeletionTimestamp != nil,
		ClusterLabel: m.Labels[jobgate.ClusterNameLabel], OwnerCluster: inspect.ClusterOwner(m.OwnerReferences)}, err
}

var metaSeeds = []string{
	`{"metadata":{"name":"a","namespace":"ns","uid":"u"}}`,
	` { "kind" : "X" , "metadata" : { "name" : "a" , "deletionTimestamp" : "2026-12-01T10:00:00Z" } } `,
	`{"metadata":{"name":"a"},"metadata":{"namespace":"b"}}`,
	`{"metadata":{"name":"a"},"metadata":null}`,
	`{"metadata":{"deletionTimestamp":"2026-12-01T10:00:00Z","deletionTimestamp":null}}`,
	`{"metadata":{"deletionTimestamp":"yesterday"}}`,
	`{"metadata":{"deletionTimestamp":5}}`,
	`{"metadata":{"deletionTimestamp":""}}`,
	`{"metadata":{"name":5}}`,
	`{"metadata":{"name":null,"uid":["x"]}}`,
	`{"metadata":"a"}`,
	`{"metadata":[]}`,
	`{"Metadata":{"name":"a"},"metadata":{"Name":"b"}}`,
	`{"\u006detadata":{"na\u006de":"\u00e9\ud83d\ude00","namespace":"a\"b\\"}}`,
	`{"spec":{"x":[1,{"y":"}\"]"},true,null,-1.5e3]},"metadata":{"name":"after"}}`,
	"{\"metadata\":{\"name\":\"\xff\xfe\"}}",
	`null`, `[]`, `"metadata"`, `5`, `true`, `{}`, `{"metadata":{}}`,
	`{"metadata":{"uid":"u","uid":null}}`,
	`{"metadata":{"uid":"u"},"metadata":{"uid":null,"name":"b"}}`,
	`{"metadata":{"labels":{"cluster.x-k8s.io/cluster-name":"prod","a":"b"}}}`,
	`{"metadata":{"labels":{"cluster.x-k8s.io/cluster-name":"prod"},"labels":{"a":"b"}}}`,
	`{"metadata":{"labels":{"cluster.x-k8s.io/cluster-name":"prod"},"labels":null}}`,
	`{"metadata":{"labels":{"cluster.x-k8s.io/cluster-name":5}}}`,
	`{"metadata":{"labels":{"cluster.x-k8s.io/cluster-name":null}}}`,
	`{"metadata":{"labels":"x"}}`,
	`{"metadata":{"ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","name":"prod","uid":"u"}]}}`,
	`{"metadata":{"ownerReferences":[{"apiVersion":"x/v1","kind":"Cluster","name":"a"},{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","name":"b"}]}}`,
	`{"metadata":{"ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","name":"a"}],"ownerReferences":[{"name":"b"}]}}`,
	`{"metadata":{"ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","name":"a"}],"ownerReferences":[null]}}`,
	`{"metadata":{"ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","name":"a"}],"ownerReferences":[]}}`,
	`{"metadata":{"ownerReferences":[{"apiVersion":"a/b/c","kind":"Cluster","name":"a"}]}}`,
	`{"metadata":{"ownerReferences":[{"kind":"Cluster","name":5}]}}`,
	`{"metadata":{"ownerReferences":{"kind":"Cluster"}}}`,
	`{"metadata":{"ownerReferences":[{"Kind":"Cluster","apiVersion":"cluster.x-k8s.io/v1beta2","name":"a"}]}}`,
}

// Not JSON, or cut short: metaOf never reads past the end (it only runs
// after the list's decoder checked the item, so what it returns for them
// does not matter).
var brokenMeta = []string{
	``, ` `, `{`, `{"a":1`, `{"metadata":{"name":"`, `{"metadata":{"name":"a\`, `{"metadata"`, `{"metadata":`,
	`{"metadata":{`, `{"metadata":{"name"}`, `{"metadata":{"name":"a"`, `{"a" 1}`, `{"a":1 "b":2}`, `{"`, `{"\`,
	"k8s\x00\n\x0b\n\x02v1\x12\x05Lease\x12\x7b\n\x22",
}

func TestMetaOf(t *testing.T) {
	for _, s := range metaSeeds {
		got, gotErr := metaOf([]byte(s))
		want, wantErr := decodeMeta([]byte(s))
		if (gotErr != nil) != (wantErr != nil) || (gotErr == nil && got != want) {
			t.Errorf("metaOf(%s) = %+v, %v; the decoder reads %+v, %v", s, got, gotErr, want, wantErr)
		}
	}
	// Cut short, it fails rather than reading past the end (a panic).
	for _, s := range brokenMeta[2:] {
		if _, err := metaOf([]byte(s)); err == nil {
			t.Errorf("metaOf(%q) reads it", s)
		}
	}
	// What a user would check: the fields of an object are found past a
	// spec that holds every kind of value, and a deleting one is told.
	m, err := metaOf([]byte(metaSeeds[1]))
	if err != nil || m.Name != "a" || !m.Deleting {
		t.Errorf("metaOf of a deleting object = %+v, %v", m, err)
	}
	// Its Cluster API Cluster: the cluster-name label, and the owner
	// reference to a Cluster.
	m, err = metaOf([]byte(`{"metadata":{"name":"a","labels":{"cluster.x-k8s.io/cluster-name":"prod"},"ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","name":"owner"}]}}`))
	if err != nil || m.ClusterLabel != "prod" || m.OwnerCluster != "owner" {
		t.Errorf("metaOf of a Cluster's object = %+v, %v", m, err)
	}
}

// FuzzItemMeta: on any valid JSON (what the list's decoder hands over),
// metaOf reads what the decoder it stands for reads, and fails when it
// fails. Invalid JSON never reaches it: FuzzJSONList holds the list
// decoder to rejecting it.
func FuzzItemMeta(f *testing.F) {
	for _, s := range append(metaSeeds, brokenMeta...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, gotErr := metaOf(b) // on anything: no panic
		if !json.Valid(b) {
			return
		}
		want, wantErr := decodeMeta(b)
		if (gotErr != nil) != (wantErr != nil) || (gotErr == nil && got != want) {
			t.Fatalf("metaOf(%q) = %+v, %v; the decoder reads %+v, %v", b, got, gotErr, want, wantErr)
		}
	})
}
