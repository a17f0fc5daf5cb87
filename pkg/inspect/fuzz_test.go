package inspect

import (
	"bufio"
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kjson "sigs.k8s.io/json"
)

// Whatever a holder writes, parsing never panics, and a parsed Who splits
// at its last "@".
func FuzzParseLockInfo(f *testing.F) {
	for _, s := range []string{
		lockInfo(lockID, "root@"+demoPod), `{`, `null`, `[]`, `{"ID":5}`, `{"Created":"2026-13-01T00:00:00Z"}`,
		`{"who":"a@b@c","created":"2026-09-26T15:53:38Z"}`, "{\"Who\":\"\xff\xfe@host\"}", `{"Who":"x@"}`,
	} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, info string, held bool) {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "lock-tfstate-default-x", Annotations: map[string]string{AnnotationLock: info}}}
		if held {
			l.Spec.HolderIdentity = ptr(lockID)
		}
		p := ParseLease(l)
		if !held {
			if p.Held || p.Info != nil {
				t.Fatal("an unheld Lease has lock info")
			}
			return
		}
		if (p.Info == nil) == (p.InfoErr == nil) {
			t.Fatalf("Info %v and InfoErr %v", p.Info, p.InfoErr)
		}
		if p.Info != nil && p.HostErr == nil && !strings.HasSuffix(p.Info.Who, "@"+p.Host) {
			t.Fatalf("Who %q, host %q", p.Info.Who, p.Host)
		}
		// Classify never panics on it either.
		Classify(Facts{Lease: p})
	})
}

func FuzzSplitWho(f *testing.F) {
	for _, s := range []string{"root@pod", "@pod", "root@", "", "a@b@c", "no-at", "@", "@@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, who string) {
		host, err := SplitWho(who)
		if err != nil {
			if host != "" {
				t.Fatalf("error %v with host %q", err, host)
			}
			return
		}
		if host == "" || strings.Contains(host, "@") || who[:len(who)-len(host)-1]+"@"+host != who {
			t.Fatalf("SplitWho(%q) = %q", who, host)
		}
	})
}

// Lease names split into workspace and suffix that rebuild the name,
// whatever the labels say: the name is the authority, as for CAPTF. Labels
// only choose the split of a name that has no CAPTF suffix, and any label
// that disagrees with the split is a warning.
func FuzzLeaseName(f *testing.F) {
	for _, s := range []string{"default-0b41ac905b337e94-c", "blue-green-7c1ed7a877508259-mp", "default-other", "x", "-", "a--b"} {
		f.Add(s, "", "")
	}
	f.Add("my-ws-my-suffix", "my-ws", "")
	f.Add("my-ws-my-suffix", "", "my-suffix")
	f.Fuzz(func(t *testing.T, rest, wsLabel, suffixLabel string) {
		labels := map[string]string{}
		if wsLabel != "" {
			labels[LabelWorkspace] = wsLabel
		}
		if suffixLabel != "" {
			labels[LabelSecretSuffix] = suffixLabel
		}
		l := ParseLease(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "lock-tfstate-" + rest, Labels: labels}})
		if strings.Contains(rest, "-") && l.Workspace+"-"+l.Suffix != rest {
			t.Fatalf("%q split into %q and %q", rest, l.Workspace, l.Suffix)
		}
		for label, got := range map[string]string{LabelWorkspace: l.Workspace, LabelSecretSuffix: l.Suffix} {
			v, ok := labels[label]
			warned := strings.Contains(strings.Join(l.Warnings, "\n"), "label "+label+"=")
			if ok && v != got && !warned {
				t.Fatalf("label %s=%q disagrees with %q unwarned", label, v, got)
			}
			if warned && (!ok || v == got) {
				t.Fatalf("label %s warned about wrongly: %q", label, l.Warnings)
			}
		}
		if wsLabel != "" && suffixLabel != "" && rest == wsLabel+"-"+suffixLabel && !captfSuffix.MatchString(rest) &&
			(l.Workspace != wsLabel || l.Suffix != suffixLabel) {
			t.Fatalf("labels that agree with the name not taken: %q %q", l.Workspace, l.Suffix)
		}
	})
}

// The JSON list splitter agrees with a JSON decoder on every list the
// decoder reads: the same items, byte for byte, the same continue token,
// and the same name, namespace and UID of each item; on anything else it
// may fail, but never panics.
func FuzzJSONItems(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"v1","items":[],"kind":"List","metadata":{"continue":"abc"}}`,
		`{"items":null}`, `{"items":[{"metadata":{"name":"a","namespace":"n","uid":"u"}}]}`,
		`{"metadata":{"continue":"x\"}"},"items":[{"a":"}\"{[","metadata":{"name":"b\u00e9","x":[1,{"y":null}]}} , {"metadata":{}}]}`,
		` { "items" : [ { "metadata" : { "name" : "a" , "name" : "b" } } ] } `, `{"items":[1]}`, `{"items":[{]}`, `[]`, ``,
		"{\"items\":[{\"metadata\":{\"name\":\"\xff\"}}]}", `{"items":[null]}`, `{"items":[{"a":"\\\\"},{"b":"x\\\""}],"metadata":{"continue":"\\"}}`,
		`{"metadata":{"continue":"t"},"metadata":{}}`, `{"items":[{"metadata":{"name":"a"},"metadata":{"namespace":"n"}}]}`,
		`{"items":[{"metadata":{"name":"a","deletionTimestamp":"2026-12-01T00:00:00Z"}},{"metadata":{"name":"b","deletionTimestamp":null}},{"metadata":{"deletionTimestamp":"x","deletionTimestamp":"y"}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var items [][]byte
		cont, err := jsonItems(bytes.NewReader(b), func(item []byte, proto bool) error {
			items = append(items, append([]byte(nil), item...))
			_, _ = jsonMeta(item)
			return nil
		})
		// Read a byte at a time, every value, string and escape is split
		// across chunks: the same list.
		var small [][]byte
		smallCont, smallErr := jsonItems(bufio.NewReaderSize(iotest.OneByteReader(bytes.NewReader(b)), 16), func(item []byte, proto bool) error {
			small = append(small, append([]byte(nil), item...))
			return nil
		})
		if (err == nil) != (smallErr == nil) || cont != smallCont || !reflect.DeepEqual(items, small) {
			t.Fatalf("a byte at a time: %d items, %q, %v; whole: %d items, %q, %v", len(small), smallCont, smallErr, len(items), cont, err)
		}
		var want struct {
			Items    []json.RawMessage `json:"items"`
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
		}
		if strictErrs, e := kjson.UnmarshalStrict(b, &want, kjson.DisallowDuplicateFields); e != nil || len(strictErrs) > 0 {
			return // not a list a decoder reads (or one with duplicate keys)
		}
		for _, it := range want.Items {
			if len(it) == 0 || it[0] != '{' {
				return // not a list of objects
			}
		}
		if err != nil || cont != want.Metadata.Continue || len(items) != len(want.Items) {
			t.Fatalf("split %d items, continue %q, %v; a decoder reads %d, %q", len(items), cont, err, len(want.Items), want.Metadata.Continue)
		}
		for n := range items {
			if !bytes.Equal(items[n], want.Items[n]) {
				t.Fatalf("item %d: %q, want %q", n, items[n], want.Items[n])
			}
			var meta struct {
				Metadata *struct {
					Namespace         string    `json:"namespace"`
					Name              string    `json:"name"`
					UID               types.UID `json:"uid"`
					DeletionTimestamp *string   `json:"deletionTimestamp"`
				} `json:"metadata"`
			}
			if strictErrs, e := kjson.UnmarshalStrict(items[n], &meta, kjson.DisallowDuplicateFields); e != nil || len(strictErrs) > 0 {
				continue
			}
			got, err := jsonMeta(items[n])
			if m := meta.Metadata; m == nil {
				if err == nil {
					t.Fatalf("item %d has no metadata, and read as %+v", n, got)
				}
			} else if deleting := m.DeletionTimestamp != nil && *m.DeletionTimestamp != ""; err != nil || got.namespace != m.Namespace || got.name != m.Name || got.uid != m.UID || got.deleting != deleting {
				t.Fatalf("item %d: %+v %v; want %+v", n, got, err, *m)
			}
		}
	})
}
