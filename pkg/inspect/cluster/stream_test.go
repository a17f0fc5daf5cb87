package cluster

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	kjson "sigs.k8s.io/json"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// managed are managedFields as the API server writes them.
var managed = []metav1.ManagedFieldsEntry{{Manager: "terraform", Operation: metav1.ManagedFieldsOperationUpdate,
	FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)}}}

// leaseList is a list as the API server sends it, managedFields included:
// n lock Leases held by their runner pods.
func leaseList(n int) *coordinationv1.LeaseList {
	l := &coordinationv1.LeaseList{ListMeta: metav1.ListMeta{ResourceVersion: "42"}}
	l.SetGroupVersionKind(coordinationv1.SchemeGroupVersion.WithKind("LeaseList"))
	for i := range n {
		r := object.Ref{Kind: object.TerraformCluster, Namespace: "ns", Name: fmt.Sprintf("c%d", i)}
		id := fmt.Sprintf("%08x-0000-0000-0000-000000000000", i)
		info := fmt.Sprintf(`{"ID":%q,"Operation":"OperationTypeApply","Who":"root@captf-c-c%d-apply-a1-d72d2a-x7k2p","Version":"1.11.4","Created":"2026-09-26T15:53:38Z"}`, id, i)
		x := coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
			Name: object.LockLeaseName("default", r.Suffix()), Namespace: "ns", UID: types.UID(fmt.Sprintf("uid-%d", i)), ResourceVersion: "7",
			Annotations: map[string]string{inspect.AnnotationLock: info}, ManagedFields: managed,
		}}
		x.Spec.HolderIdentity = &id
		l.Items = append(l.Items, x)
	}
	return l
}

// encode is obj as the API server sends it: protobuf in its envelope, or
// JSON.
func encode(t testing.TB, obj runtime.Object, proto bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	var err error
	if proto {
		err = protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &buf)
	} else {
		err = json.NewEncoder(&buf).Encode(obj)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// served answers each path with its body, as an API server would: the
// protobuf content type for a protobuf body, else JSON; a path not given
// is 404, with a Status.
func served(t testing.TB, bodies map[string][]byte) *Reader {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := bodies[r.URL.Path]
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
			return
		}
		if bytes.HasPrefix(b, protobufMagic) {
			w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	r, err := ForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Every list kind is read through the REST client as against an API
// server, whole, in protobuf and in JSON, of any length; a body cut short
// or malformed is an error, never a shorter list.
func TestListsOfEveryKind(t *testing.T) {
	leases := leaseList(300)
	for _, name := range []string{"captf-run-0b41ac905b337e94-c", "lock-tfstate-other-x"} {
		l := leases.Items[0].DeepCopy()
		l.Name = name
		leases.Items = append(leases.Items, *l)
	}
	pods := &corev1.PodList{}
	pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	jobs := &batchv1.JobList{}
	jobs.SetGroupVersionKind(batchv1.SchemeGroupVersion.WithKind("JobList"))
	for i := range 200 {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("captf-c-c%d-apply-a1-d72d2a-x7k2p", i), Namespace: "ns", Labels: map[string]string{inspect.LabelManaged: "true"}, ManagedFields: managed},
			Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"}}
		pods.Items = append(pods.Items, p)
		j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("captf-c-c%d-apply-a1-d72d2a", i), Namespace: "ns", Labels: map[string]string{inspect.LabelManaged: "true"}},
			Spec: batchv1.JobSpec{Parallelism: new(int32)}, Status: batchv1.JobStatus{Active: 1}}
		jobs.Items = append(jobs.Items, j)
	}
	pods.Items = append(pods.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns"}})
	for _, proto := range []bool{true, false} {
		r := served(t, map[string][]byte{
			"/apis/coordination.k8s.io/v1/leases": encode(t, leases, proto),
			"/api/v1/pods":                        encode(t, pods, proto),
			"/apis/batch/v1/jobs":                 encode(t, jobs, proto),
		})
		got, err := r.listLeases(t.Context(), inspect.Scope{}, func(inspect.Lease) {})
		if err != nil || len(got) != 300 || got[299].Name != leases.Items[299].Name || got[0].ID != *leases.Items[0].Spec.HolderIdentity || got[0].Info == nil || got[0].UID != "uid-0" {
			t.Fatalf("proto %v: %d Leases, %v", proto, len(got), err)
		}
		if got, _ := r.listLeases(t.Context(), inspect.Scope{AllWorkspaces: true}, func(inspect.Lease) {}); len(got) != 301 || got[300].Name != "lock-tfstate-other-x" {
			t.Errorf("proto %v: all workspaces: %d Leases", proto, len(got))
		}
		p, err := r.listPods(t.Context(), "", "")
		if err != nil || len(p) != 200 || !p["ns/captf-c-c7-apply-a1-d72d2a-x7k2p"].managed || p["ns/captf-c-c7-apply-a1-d72d2a-x7k2p"].pod.Status.Reason != "Evicted" {
			t.Errorf("proto %v: %d pods (web-0 is no holder), %v", proto, len(p), err)
		}
		j, err := r.listJobs(t.Context(), "", "")
		if err != nil || len(j) != 200 || j[0].Status.Active != 1 || j[0].Spec.Parallelism != nil {
			t.Errorf("proto %v: %d Jobs, %v", proto, len(j), err)
		}
	}
	for name, body := range map[string][]byte{
		"protobuf cut short": encode(t, leases, true)[:5000],
		"JSON cut short":     encode(t, leases, false)[:5000],
		"JSON, not a list":   []byte(`[1,2]`),
		"JSON, bad item":     []byte(`{"items":[{"metadata":{"name":"lock-tfstate-default-x"},"spec":{]}]}`),
		"JSON, after":        append(encode(t, leases, false), []byte(`{}`)...),
		"protobuf, no list":  protobufMagic,
	} {
		r := served(t, map[string][]byte{"/apis/coordination.k8s.io/v1/leases": body})
		if got, err := r.listLeases(t.Context(), inspect.Scope{}, func(inspect.Lease) {}); err == nil {
			t.Errorf("%s: %d Leases and no error", name, len(got))
		}
	}
}

// The CAPTF kinds, JSON only: every object's metadata, and in full the
// ones kept. A kind not served is said, not an error.
func TestObjectLists(t *testing.T) {
	var items []string
	for i := range 50 {
		del := "null"
		if i == 3 {
			del = `"2026-11-30T12:00:00Z"`
		}
		items = append(items, fmt.Sprintf(`{"apiVersion":"infrastructure.cluster.x-k8s.io/v1alpha1","kind":"TerraformCluster","metadata":{"name":"c%d","namespace":"ns","uid":"u%d","deletionTimestamp":%s,"managedFields":[{"manager":"x"}]},"spec":{"deletionPolicy":"Retain"}}`, i, i, del))
	}
	body := []byte(`{"apiVersion":"infrastructure.cluster.x-k8s.io/v1alpha1","kind":"TerraformClusterList","metadata":{"resourceVersion":"9"},"items":[` + strings.Join(items, ",") + `]}`)
	r := served(t, map[string][]byte{"/apis/infrastructure.cluster.x-k8s.io/v1alpha1/terraformclusters": body})
	keep := object.Ref{Kind: object.TerraformCluster, Namespace: "ns", Name: "c3"}
	l := r.listObjects(t.Context(), object.TerraformCluster, "", func(ref object.Ref, _ bool) (bool, error) { return ref == keep, nil })
	if l.Err != nil || !l.Served || len(l.Objects) != 50 || !l.Objects[keep].Deleting || l.Objects[keep].UID != "u3" || len(l.full) != 1 {
		t.Fatalf("%+v", l)
	}
	if u := l.full[keep]; u.GetName() != "c3" || u.GetManagedFields() != nil || u.Object["spec"].(map[string]any)["deletionPolicy"] != "Retain" {
		t.Errorf("kept %+v", u)
	}
	if l := r.listObjects(t.Context(), object.TerraformMachine, "", func(object.Ref, bool) (bool, error) { return true, nil }); l.Served || l.Err != nil {
		t.Errorf("a kind not served: %+v", l)
	}
	for name, bad := range map[string][]byte{
		"cut short":         body[:len(body)/2],
		"name not a string": []byte(`{"items":[{"metadata":{"name":1}}]}`),
		"missing comma":     []byte(`{"items":[{"metadata":{"name":"a"} "spec":{}}]}`),
		"bare word":         []byte(`{"items":[tru]}`),
	} {
		r := served(t, map[string][]byte{"/apis/infrastructure.cluster.x-k8s.io/v1alpha1/terraformclusters": bad})
		if l := r.listObjects(t.Context(), object.TerraformCluster, "", func(object.Ref, bool) (bool, error) { return false, nil }); l.Err == nil {
			t.Errorf("%s: read without error: %+v", name, l)
		}
	}
}

// Each item of a protobuf list decodes to what the typed client decodes.
func TestProtobufItems(t *testing.T) {
	for _, n := range []int{0, 1, 300} {
		want := leaseList(n)
		b := encode(t, want, true)
		var got []coordinationv1.Lease
		err := protobufItems(bufio.NewReader(bytes.NewReader(b[len(protobufMagic):])), func(b []byte, proto bool) error {
			var l coordinationv1.Lease
			if !proto {
				t.Fatal("protobuf item handed on as JSON")
			}
			err := l.Unmarshal(b)
			got = append(got, l)
			return err
		})
		if err != nil || len(got) != n {
			t.Fatalf("%d items: %d read, %v", n, len(got), err)
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], want.Items[i]) {
				t.Fatalf("item %d differs", i)
			}
		}
	}
}

// Leaving managedFields out changes nothing else of an object.
func TestWithoutManagedFields(t *testing.T) {
	l := leaseList(1).Items[0]
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", ManagedFields: managed, Annotations: map[string]string{"a": "b"}, Finalizers: []string{"x"}},
		Spec: corev1.PodSpec{NodeName: "node-1"}, Status: corev1.PodStatus{Reason: "Evicted"}}
	for _, obj := range []interface {
		runtime.Object
		Marshal() ([]byte, error)
	}{&l, p} {
		b, err := obj.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		stripped, err := withoutManagedFields(b, make([]byte, 3))
		if err != nil {
			t.Fatal(err)
		}
		got := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
		if err := got.(interface{ Unmarshal([]byte) error }).Unmarshal(stripped); err != nil {
			t.Fatal(err)
		}
		want := obj.DeepCopyObject()
		want.(metav1.Object).SetManagedFields(nil)
		if !reflect.DeepEqual(got, want) || len(stripped) >= len(b) {
			t.Errorf("%d of %d bytes:\n%+v\nwant\n%+v", len(stripped), len(b), got, want)
		}
		if _, err := withoutManagedFields(b[:len(b)-3], nil); err == nil {
			t.Error("a truncated object parsed")
		}
	}
}

// FuzzProtobufWalk: on any bytes, protoName and withoutManagedFields agree
// with what decoding a Lease gives, and refuse what does not parse; a
// Lease's own bytes always parse.
func FuzzProtobufWalk(f *testing.F) {
	l := leaseList(1).Items[0]
	b, _ := l.Marshal()
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte{0x0a, 0x02, 0x0a})
	f.Add([]byte{0x0a, 0x80})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var whole coordinationv1.Lease
		decodes := whole.Unmarshal(b) == nil
		name, ok := protoName(b)
		stripped, err := withoutManagedFields(b, nil)
		if err != nil {
			if ok {
				t.Fatalf("protoName read %q of bytes withoutManagedFields refuses: %v", name, err)
			}
			return
		}
		var x coordinationv1.Lease
		if err := x.Unmarshal(stripped); decodes && err != nil {
			t.Fatalf("the Lease decodes, but not without its managedFields: %v", err)
		}
		if decodes {
			whole.ManagedFields = nil
			if !reflect.DeepEqual(x, whole) {
				t.Fatalf("without managedFields:\n%+v\nwant\n%+v", x, whole)
			}
			if ok && name != whole.Name {
				t.Fatalf("protoName %q, decoding %q", name, whole.Name)
			}
		}
	})
}

// FuzzJSONList: a JSON list is read exactly when encoding/json reads it as
// an object whose items is an array (or null), and its items are then the
// array's, byte for byte; it is read the same a byte at a time.
func FuzzJSONList(f *testing.F) {
	f.Add([]byte(`{"items":[{"metadata":{"name":"a"}},{"b":1}],"metadata":{"continue":""}}`))
	f.Add([]byte(`{"metadata":{"name":"a"},"spec":{]}`))
	f.Add([]byte(`{"items":[{"metadata":{"name":"a"}} {"x":1}]}`))
	f.Add([]byte(`{"items":[tru]}`))
	f.Add([]byte(`{"items":null}`))
	f.Add([]byte(`{"items":[],"items":[]}`))
	f.Add([]byte(`{"items":[1]} x`))
	f.Add([]byte(`{"items":["\ud800",{"a":"\u00e9"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var want struct {
			Items *[]json.RawMessage `json:"items"`
		}
		// Keys are matched case-sensitively, as apimachinery decodes.
		var top map[string]json.RawMessage
		valid := json.Unmarshal(b, &top) == nil && top != nil
		var items []json.RawMessage
		if valid {
			if err := kjson.UnmarshalCaseSensitivePreserveInts(b, &want); err != nil {
				valid = false
			} else if want.Items != nil {
				items = *want.Items
			}
		}
		for _, r := range []io.Reader{bytes.NewReader(b), oneByte{bytes.NewReader(b)}} {
			var got []json.RawMessage
			err := jsonItems(r, func(item []byte, _ bool) error {
				got = append(got, append(json.RawMessage(nil), item...))
				return nil
			})
			if valid && bytes.Count(b, []byte(`"items"`)) > 1 {
				return // a duplicate key: refused here, merged by a decoder
			}
			if (err == nil) != valid {
				t.Fatalf("%q: read %v, encoding/json reads it %v (%v)", b, err == nil, valid, err)
			}
			if err == nil && len(got) != len(items) {
				t.Fatalf("%q: %d items, want %d", b, len(got), len(items))
			}
		}
	})
}

// oneByte reads one byte at a time, as a slow network hands on a body.
type oneByte struct{ r *bytes.Reader }

func (o oneByte) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

// FuzzProtobufList: the envelope walk reads a list body (the bytes after
// the protobuf magic) only when the library reads it (runtime.Unknown,
// then LeaseList.Unmarshal of its raw), and then gives the items the
// library decodes, in order; it rejects the rest, and never panics.
func FuzzProtobufList(f *testing.F) {
	whole := encode(f, leaseList(3), true)[4:]
	f.Add(whole)
	f.Add(whole[:len(whole)/2])
	f.Add(encode(f, leaseList(0), true)[4:])
	f.Add([]byte{0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0x01})
	f.Add([]byte{0x12, 0x02, 0x10, 0x01})
	// A known field of another wire type: the envelope's contentType as
	// fixed64, the list's metadata as a varint.
	f.Add([]byte{0x21, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x00})
	f.Add([]byte{0x12, 0x02, 0x08, 0x01})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var items []coordinationv1.Lease
		err := protobufItems(bufio.NewReader(bytes.NewReader(b)), func(item []byte, _ bool) error {
			var l coordinationv1.Lease
			if err := l.Unmarshal(item); err != nil {
				return err
			}
			items = append(items, l)
			return nil
		})
		var u runtime.Unknown
		var want coordinationv1.LeaseList
		libErr := u.Unmarshal(b)
		if libErr == nil {
			libErr = want.Unmarshal(u.Raw)
		}
		if libErr == nil && u.Raw == nil {
			libErr = errors.New("no list")
		}
		switch {
		case err == nil && libErr != nil:
			t.Fatalf("read %d items of a body the library rejects: %v", len(items), libErr)
		case err != nil:
			return // rejecting more than the library (an unknown wire type, two lists) is allowed
		}
		if len(items) != len(want.Items) {
			t.Fatalf("%d items, the library %d", len(items), len(want.Items))
		}
		for n := range items {
			if !reflect.DeepEqual(items[n], want.Items[n]) {
				t.Fatalf("item %d differs", n)
			}
		}
	})
}
