package inspect

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// leaseList is a list as the API server sends it, managedFields included.
func leaseList(n int, cont string) *coordinationv1.LeaseList {
	l := &coordinationv1.LeaseList{ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: cont}}
	l.SetGroupVersionKind(coordinationv1.SchemeGroupVersion.WithKind("LeaseList"))
	for i := 0; i < n; i++ {
		r := object.Ref{Kind: object.TerraformCluster, Namespace: "ns", Name: fmt.Sprintf("c%d", i)}
		x := held(r, fmt.Sprintf("root@captf-c-c%d-apply-a1-d72d2a-x7k2p", i))
		x.UID = types.UID(fmt.Sprintf("uid-%d", i))
		x.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "terraform", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)}}}
		l.Items = append(l.Items, *x)
	}
	return l
}

// Each item of a protobuf list decodes to what the typed client decodes,
// and the continue token is read, whatever the list's size.
func TestProtobufItems(t *testing.T) {
	for _, n := range []int{0, 1, 300} {
		want := leaseList(n, "next-page")
		var buf bytes.Buffer
		if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(want, &buf); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(buf.Bytes(), protobufMagic) {
			t.Fatalf("no protobuf magic: %q", buf.Bytes()[:8])
		}
		var got []coordinationv1.Lease
		r := bufio.NewReader(bytes.NewReader(buf.Bytes()[len(protobufMagic):]))
		cont, err := protobufItems(r, func(b []byte, proto bool) error {
			var l coordinationv1.Lease
			if !proto {
				t.Fatal("protobuf item handed on as JSON")
			}
			got = append(got, l)
			return got[len(got)-1].Unmarshal(b)
		})
		if err != nil || cont != "next-page" || len(got) != n {
			t.Fatalf("%d items: %d read, continue %q, %v", n, len(got), cont, err)
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], want.Items[i]) {
				t.Fatalf("item %d:\n%+v\nwant\n%+v", i, got[i], want.Items[i])
			}
		}
		// A body cut short is an error, never a shorter list.
		if n > 0 {
			short := bufio.NewReader(bytes.NewReader(buf.Bytes()[len(protobufMagic) : buf.Len()-10]))
			if _, err := protobufItems(short, func([]byte, bool) error { return nil }); err == nil {
				t.Errorf("%d items: a truncated body read without error", n)
			}
		}
	}
}

// A JSON list hands on each item's own bytes and its continue token.
func TestJSONItems(t *testing.T) {
	want := leaseList(50, "tok")
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got []coordinationv1.Lease
	cont, err := jsonItems(bytes.NewReader(b), func(b []byte, proto bool) error {
		var l coordinationv1.Lease
		err := json.Unmarshal(b, &l)
		got = append(got, l)
		return err
	})
	if err != nil || cont != "tok" || len(got) != 50 {
		t.Fatalf("%d read, continue %q, %v", len(got), cont, err)
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want.Items[i]) {
			t.Fatalf("item %d differs", i)
		}
		m, err := jsonMeta(mustJSON(t, got[i]))
		if err != nil || m.namespace != "ns" || m.name != got[i].Name || m.uid != got[i].UID || m.deleting != (got[i].DeletionTimestamp != nil) {
			t.Errorf("jsonMeta: %+v %v", m, err)
		}
	}
	if _, err := jsonItems(bytes.NewReader(b[:len(b)/2]), func([]byte, bool) error { return nil }); err == nil {
		t.Error("a truncated body read without error")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A finished pod keeps what its death is told from, and nothing else.
func TestPodFactKeepsTheDeath(t *testing.T) {
	p := pod("default", demoPod, corev1.PodFailed, true)
	p.Spec.NodeName = "node-1"
	p.Status.Reason, p.Status.Message = "Evicted", "low on memory"
	term := &corev1.ContainerStateTerminated{ExitCode: 137, Signal: 9, Reason: "OOMKilled", FinishedAt: metav1.Now()}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "runner", Image: "x", State: corev1.ContainerState{Terminated: term}}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady}}
	f := podFact(p)
	d := podDeath(f)
	full := &Pod{Name: p.Name, Exists: true, Phase: p.Status.Phase, Node: "node-1", Status: &p.Status}
	if !reflect.DeepEqual(d, podDeath(full)) {
		t.Errorf("death %+v, from the whole status %+v", d, podDeath(full))
	}
	if f.Status.Conditions != nil || f.Status.ContainerStatuses[0].Image != "" {
		t.Errorf("kept more than the death needs: %+v", f.Status)
	}
	if running := podFact(pod("default", demoPod, corev1.PodRunning, true)); running.Status != nil {
		t.Errorf("a running pod keeps its status")
	}
}

// Leaving managedFields out changes nothing else of an object.
func TestWithoutManagedFields(t *testing.T) {
	l := leaseList(1, "").Items[0]
	p := pod("default", demoPod, corev1.PodFailed, true)
	p.ManagedFields, p.Annotations, p.Finalizers = l.ManagedFields, map[string]string{"a": "b"}, []string{"x"}
	p.Spec.NodeName, p.Status.Reason = "node-1", "Evicted"
	for _, obj := range []interface {
		Marshal() ([]byte, error)
		Unmarshal([]byte) error
	}{&l, p} {
		b, err := obj.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		stripped, err := withoutManagedFields(b, make([]byte, 3))
		if err != nil {
			t.Fatal(err)
		}
		var got, want any
		switch o := obj.(type) {
		case *coordinationv1.Lease:
			var x coordinationv1.Lease
			err, got = x.Unmarshal(stripped), &x
			w := o.DeepCopy()
			w.ManagedFields, want = nil, w
		case *corev1.Pod:
			var x corev1.Pod
			err, got = x.Unmarshal(stripped), &x
			w := o.DeepCopy()
			w.ManagedFields, want = nil, w
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%v:\n%+v\nwant\n%+v", err, got, want)
		}
		if len(stripped) >= len(b) {
			t.Errorf("%d bytes of %d: nothing left out", len(stripped), len(b))
		}
		if _, err := withoutManagedFields(b[:len(b)-3], nil); err == nil {
			t.Error("a truncated object parsed")
		}
	}
}

// protoName reads the name that decoding gives, of any object, and says
// when it cannot, so that the item is decoded and its error reported.
func TestProtoName(t *testing.T) {
	l := leaseList(1, "").Items[0]
	p := pod("default", demoPod, corev1.PodFailed, true)
	p.ManagedFields = l.ManagedFields
	for _, obj := range []interface {
		Marshal() ([]byte, error)
		GetName() string
	}{&l, p} {
		b, err := obj.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if name, ok := protoName(b); !ok || name != obj.GetName() {
			t.Errorf("protoName = %q, %v; want %q", name, ok, obj.GetName())
		}
		if name, ok := protoName(b[:3]); ok {
			t.Errorf("a cut object gave the name %q", name)
		}
	}
	if name, ok := protoName(nil); ok {
		t.Errorf("no object gave the name %q", name)
	}
}

// Through the REST client, as against an API server: a protobuf list of
// lock and other Leases gives the lock Leases, whole, and only them.
func TestListLeasesSkipsOtherLeasesByName(t *testing.T) {
	list := leaseList(3, "")
	for _, name := range []string{"captf-run-0b41ac905b337e94-c", "captf-cluster-0123456789abcdef", "lock-tfstate-other-x"} {
		l := list.Items[0].DeepCopy()
		l.Name = name
		list.Items = append(list.Items, *l)
	}
	var body bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(list, &body); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/coordination.k8s.io/v1/leases" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
		_, _ = w.Write(body.Bytes())
	}))
	defer srv.Close()
	in, err := ForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, all := range []bool{false, true} {
		got, err := in.listLeases(t.Context(), Scope{AllWorkspaces: all}, func(Lease) {})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range got {
			names = append(names, l.Name)
		}
		want := []string{list.Items[0].Name, list.Items[1].Name, list.Items[2].Name}
		if all {
			want = append(want, "lock-tfstate-other-x")
		}
		if !reflect.DeepEqual(names, want) {
			t.Errorf("all workspaces %v: %v, want %v", all, names, want)
		}
		if len(got) > 0 && (got[0].ID == "" || got[0].UID != list.Items[0].UID) {
			t.Errorf("a lock Lease decoded short: %+v", got[0])
		}
	}
}
