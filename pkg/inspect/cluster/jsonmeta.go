package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kjson "sigs.k8s.io/json"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
)

// The metadata of every CAPTF object in a list is read by walking the
// item's bytes, not by decoding it: the list's decoder has already
// checked them as JSON, and a second decode (sigs.k8s.io/json checks the
// whole item again, then walks it) took half the time locks -A spends on
// the three kinds (docs/benchmarks.md, BenchmarkItemMeta). The walk
// relies on that check to read valid JSON right: FuzzItemMeta holds it to
// the decoder's result, error or not, on any valid JSON. Given anything
// else it fails or reads something, but never reads past the end.

// itemMeta is what a list reads of every CAPTF object: the fields of its
// metadata a lock's owner is found and kept by.
type itemMeta struct {
	Namespace, Name string
	UID             types.UID
	// Deleting: metadata.deletionTimestamp is set.
	Deleting bool
	// ClusterLabel is the cluster.x-k8s.io/cluster-name label, and
	// OwnerCluster the first owner reference to a Cluster
	// (inspect.ClusterOwner): the object's Cluster API Cluster.
	ClusterLabel, OwnerCluster string
}

var (
	errNotObject = errors.New("a list item is not a JSON object")
	errSyntax    = errors.New("a list item is not valid JSON")
)

// metaOf reads an item's metadata as sigs.k8s.io/json's case-sensitive
// decode into those fields would: names match exactly, a later
// duplicate overwrites an earlier one, null leaves a field as it was (a
// deletionTimestamp: unset), and a value of the wrong type is an error.
// Of the labels, only the cluster-name label is kept (clusterLabel);
// ownerReferences, an array of objects whose repeated members merge
// element by element, is decoded by that decoder itself, into the value
// a whole decode would fill. item must be valid JSON.
func metaOf(item []byte) (m itemMeta, err error) {
	var label string
	var refs []metav1.OwnerReference
	defer func() {
		m.ClusterLabel, m.OwnerCluster = label, inspect.ClusterOwner(refs)
	}()
	i := skipSpace(item, 0)
	if bytes.HasPrefix(item[i:], []byte("null")) {
		return m, nil
	}
	if at(item, i) != '{' {
		return m, errNotObject
	}
	err = eachMember(item, i, func(key, value []byte) error {
		if !bytes.Equal(key, []byte("metadata")) || isNull(value) {
			return nil
		}
		if at(value, 0) != '{' {
			return errors.New("metadata is not a JSON object")
		}
		return eachMember(value, 0, func(key, value []byte) error {
			switch {
			case bytes.Equal(key, []byte("namespace")):
				return stringValue(value, &m.Namespace)
			case bytes.Equal(key, []byte("name")):
				return stringValue(value, &m.Name)
			case bytes.Equal(key, []byte("uid")):
				s := string(m.UID)
				err := stringValue(value, &s)
				m.UID = types.UID(s)
				return err
			case bytes.Equal(key, []byte("labels")):
				return clusterLabel(value, &label)
			case bytes.Equal(key, []byte("ownerReferences")):
				return kjson.UnmarshalCaseSensitivePreserveInts(value, &refs)
			case bytes.Equal(key, []byte("deletionTimestamp")):
				if isNull(value) {
					m.Deleting = false
					return nil
				}
				var t metav1.Time
				m.Deleting = true
				return t.UnmarshalJSON(value)
			}
			return nil
		})
	})
	return m, err
}

// clusterLabel reads a labels object as a decode into a
// map[string]string would, keeping only the cluster-name label in *v: null
// empties the map (and *v), a later label of the same name overwrites an
// earlier one, a null label is "", and a value that is not a string (nor
// null), or labels that are not an object, are an error.
func clusterLabel(value []byte, v *string) error {
	if isNull(value) {
		*v = ""
		return nil
	}
	if at(value, 0) != '{' {
		return errors.New("metadata.labels is not a JSON object")
	}
	return eachMember(value, 0, func(key, value []byte) error {
		if !isNull(value) && at(value, 0) != '"' {
			return errors.New("a label's value is not a string")
		}
		if !bytes.Equal(key, []byte(jobgate.ClusterNameLabel)) {
			return nil
		}
		*v = ""
		return stringValue(value, v)
	})
}

// eachMember calls fn with each member of the object at b[i], its name
// unquoted and its value's bytes, in order.
func eachMember(b []byte, i int, fn func(key, value []byte) error) error {
	i = skipSpace(b, i+1) // past '{'
	if at(b, i) == '}' {
		return nil
	}
	for {
		end := skipValue(b, i)
		key, err := unquote(b[i:end])
		if err != nil {
			return err
		}
		if i = skipSpace(b, end); at(b, i) != ':' {
			return errSyntax
		}
		if i = skipSpace(b, i+1); i == len(b) {
			return errSyntax
		}
		end = skipValue(b, i)
		if err := fn(key, b[i:end]); err != nil {
			return err
		}
		switch i = skipSpace(b, end); at(b, i) {
		case '}':
			return nil
		case ',':
			i = skipSpace(b, i+1)
		default:
			return errSyntax
		}
	}
}

// at is b[i], or 0 past its end.
func at(b []byte, i int) byte {
	if i < len(b) {
		return b[i]
	}
	return 0
}

// skipValue returns where the value that starts at b[i] ends.
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = skipString(b, i) - 1
		case '{', '[':
			depth++
			continue
		case '}', ']':
			depth--
		default:
			if depth > 0 {
				continue
			}
			for i < len(b) && !isDelimiter(b[i]) {
				i++
			}
			return i
		}
		if depth == 0 {
			return i + 1
		}
	}
	return i
}

// skipString returns where the string that starts at b[i] ends.
func skipString(b []byte, i int) int {
	for i++; ; {
		n := bytes.IndexAny(b[i:], `"\`)
		if n < 0 {
			return len(b)
		}
		if i += n; b[i] == '"' {
			return i + 1
		}
		if i += 2; i >= len(b) { // a backslash and the byte it escapes
			return len(b)
		}
	}
}

// isDelimiter ends a number or a literal.
func isDelimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func isNull(v []byte) bool { return string(v) == "null" }

// unquote returns a string's text: its bytes when it has no escape and is
// valid UTF-8, which is what the API server sends, else what
// encoding/json decodes it to.
func unquote(v []byte) ([]byte, error) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, fmt.Errorf("%.20q is not a JSON string", v)
	}
	text := v[1 : len(v)-1]
	if bytes.IndexByte(text, '\\') < 0 && utf8.Valid(text) {
		return text, nil
	}
	var s string
	err := json.Unmarshal(v, &s)
	return []byte(s), err
}

// stringValue sets *s to a string value; null leaves it.
func stringValue(v []byte, s *string) error {
	if isNull(v) {
		return nil
	}
	text, err := unquote(v)
	if err == nil {
		*s = string(text)
	}
	return err
}
