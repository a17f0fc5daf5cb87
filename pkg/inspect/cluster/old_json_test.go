package cluster

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/types"
	kjson "sigs.k8s.io/json"
)

// A JSON list of CAPTF objects is split into its items by their oldNesting
// alone: the bytes of each item are found by counting brackets outside
// strings, and only the items that are wanted whole are decoded. A full
// JSON decoder (or jsoniter's skip, which reads every key it passes as a
// string) spends most of a 10,000-object list on objects read only for
// their names. The syntax is the API server's; what does not split as
// JSON does is an error here or when the item is decoded.

// oldNesting follows a JSON value a byte at a time, as far as telling where
// it ends: the depth of its brackets and whether a string is open.
type oldNesting struct {
	depth            int
	inString, escape bool
}

// step takes the value's next byte and says whether it ended the value,
// which starts with a bracket or a quote.
func (n *oldNesting) step(c byte) bool {
	switch {
	case n.escape:
		n.escape = false
	case n.inString:
		switch c {
		case '\\':
			n.escape = true
		case '"':
			n.inString = false
			return n.depth == 0
		}
	case c == '"':
		n.inString = true
	case c == '{' || c == '[':
		n.depth++
	case c == '}' || c == ']':
		n.depth--
		return n.depth == 0
	}
	return false
}

// scan feeds b to n, jumping over the text of strings, and returns how
// much of b the value took: all of it, or up to its end when done.
func (n *oldNesting) scan(b []byte) (int, bool) {
	for i := 0; i < len(b); i++ {
		if n.inString && !n.escape {
			j := bytes.IndexByte(b[i:], '"')
			if j < 0 {
				j = len(b) - i
			}
			if k := bytes.IndexByte(b[i:i+j], '\\'); k >= 0 {
				j = k
			}
			if i += j; i == len(b) {
				return len(b), false
			}
		}
		if n.step(b[i]) {
			return i + 1, true
		}
	}
	return len(b), false
}

// oldIsDelimiter ends a number or a literal.
func oldIsDelimiter(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

// oldLiteralLen is the length of the number or literal b starts with: up to
// its first delimiter, or all of b.
func oldLiteralLen(b []byte) int {
	for i, c := range b {
		if oldIsDelimiter(c) {
			return i
		}
	}
	return len(b)
}

func oldIsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// oldReadValue appends to buf the JSON value r is at, whose first byte c was
// just read. It scans what r has buffered, a chunk at a time.
func oldReadValue(r *bufio.Reader, c byte, buf []byte) ([]byte, error) {
	buf = append(buf, c)
	literal := c != '{' && c != '[' && c != '"'
	var n oldNesting
	n.step(c)
	for {
		chunk, err := r.Peek(max(r.Buffered(), 1))
		if len(chunk) == 0 {
			return buf, truncated(err)
		}
		if literal {
			if i := oldLiteralLen(chunk); i < len(chunk) {
				buf = append(buf, chunk[:i]...)
				_, _ = r.Discard(i)
				return buf, nil
			}
		} else if i, done := n.scan(chunk); done {
			buf = append(buf, chunk[:i]...)
			_, _ = r.Discard(i)
			return buf, nil
		}
		buf = append(buf, chunk...)
		_, _ = r.Discard(len(chunk))
		if len(buf) > maxItem {
			return buf, fmt.Errorf("a list item of more than %d bytes is larger than any object can be", maxItem)
		}
	}
}

// oldValueLen is the length of the JSON value b starts with.
func oldValueLen(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	if c := b[0]; c != '{' && c != '[' && c != '"' {
		return oldLiteralLen(b), nil
	}
	var n oldNesting
	if i, done := n.scan(b); done {
		return i, nil
	}
	return 0, io.ErrUnexpectedEOF
}

// oldNextByte is r's next byte that is not white space.
func oldNextByte(r *bufio.Reader) (byte, error) {
	for {
		c, err := r.ReadByte()
		if err != nil || !oldIsSpace(c) {
			return c, truncated(err)
		}
	}
}

// errNotJSONList is a response that is not a JSON object with a list.
var errNotJSONList = errors.New("the response is not a JSON list")

// oldJSONItems reads a JSON list: each element of "items" in turn, and the
// continue token of "metadata".
func oldJSONItems(body io.Reader, item itemFunc) (string, error) {
	r, ok := body.(*bufio.Reader)
	if !ok {
		r = bufio.NewReaderSize(body, 64<<10)
	}
	if c, err := oldNextByte(r); err != nil || c != '{' {
		return "", oldListError(err)
	}
	cont := ""
	seen := map[string]bool{}
	buf := make([]byte, 0, 16<<10)
	for {
		c, err := oldNextByte(r)
		switch {
		case err != nil:
			return "", oldListError(err)
		case c == '}':
			return cont, nil
		case c == ',':
			continue
		case c != '"':
			return "", errNotJSONList
		}
		if buf, err = oldReadValue(r, c, buf[:0]); err != nil {
			return "", oldListError(err)
		}
		k, err := oldUnquote(buf)
		if err != nil {
			return "", oldListError(err)
		}
		key := string(k)
		if (key == "items" || key == "metadata") && seen[key] {
			return "", oldListError(oldErrDuplicate(key))
		}
		seen[key] = true
		if c, err = oldNextByte(r); err != nil || c != ':' {
			return "", oldListError(err)
		}
		if c, err = oldNextByte(r); err != nil {
			return "", oldListError(err)
		}
		if key == "items" && c == '[' {
			if err := oldJSONArray(r, item, buf); err != nil {
				return "", err
			}
			continue
		}
		if buf, err = oldReadValue(r, c, buf[:0]); err != nil {
			return "", oldListError(err)
		}
		if key == "metadata" {
			var m struct {
				Continue string `json:"continue"`
			}
			if err := kjson.UnmarshalCaseSensitivePreserveInts(buf, &m); err != nil {
				return "", oldListError(err)
			}
			cont = m.Continue
		}
	}
}

// oldErrDuplicate is a key given twice where a decoder would merge or pick
// one: the API server never writes one, and the splitter does not guess.
func oldErrDuplicate(key string) error {
	return fmt.Errorf("the key %q is there twice", key)
}

// oldJSONArray hands on each object of the array r is in, after its "[".
func oldJSONArray(r *bufio.Reader, item itemFunc, buf []byte) error {
	for {
		c, err := oldNextByte(r)
		switch {
		case err != nil:
			return oldListError(err)
		case c == ']':
			return nil
		case c == ',':
			continue
		case c != '{':
			return errNotJSONList
		}
		if buf, err = oldReadValue(r, c, buf[:0]); err != nil {
			return oldListError(err)
		}
		if err := item(buf, false); err != nil {
			return err
		}
	}
}

func oldListError(err error) error {
	if err == nil {
		err = errNotJSONList
	}
	return fmt.Errorf("reading a list response: %w", err)
}

// oldMembers calls fn with the key and value of each member of the JSON
// object b, until fn returns false. The key is valid only during the call.
func oldMembers(b []byte, fn func(key, value []byte) bool) error {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return errors.New("a list item is not a JSON object")
	}
	b = b[1:]
	for {
		b = bytes.TrimLeft(b, " \t\r\n,")
		if len(b) > 0 && b[0] == '}' {
			return nil
		}
		n, err := oldValueLen(b)
		if err != nil || b[0] != '"' {
			return fmt.Errorf("a list item is not a JSON object: %v", err)
		}
		key, err := oldUnquote(b[:n])
		if err != nil {
			return err
		}
		b = bytes.TrimLeft(b[n:], " \t\r\n")
		if len(b) == 0 || b[0] != ':' {
			return errors.New("a list item is not a JSON object")
		}
		b = bytes.TrimLeft(b[1:], " \t\r\n")
		if n, err = oldValueLen(b); err != nil {
			return err
		}
		if !fn(key, b[:n]) {
			return nil
		}
		b = b[n:]
	}
}

// oldUnquote is the text of the JSON string s. When s has no escapes and is
// valid UTF-8 (as the keys and names of Kubernetes objects are), that is
// its own bytes between the quotes; else s is decoded as a decoder does.
func oldUnquote(s []byte) ([]byte, error) {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' && bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return s[1 : len(s)-1], nil
	}
	var out string
	err := json.Unmarshal(s, &out)
	return []byte(out), err
}

// oldItemMeta is what oldJSONMeta reads of an object.
type oldItemMeta struct {
	namespace, name string
	uid             types.UID
	// deleting is true when metadata.deletionTimestamp is set (not null).
	deleting bool
}

// oldJSONMeta reads an object's namespace, name, UID and whether it has a
// deletionTimestamp from its JSON, skipping everything else. A key it
// reads given twice is an error.
func oldJSONMeta(b []byte) (oldItemMeta, error) {
	var m oldItemMeta
	var meta []byte
	var bad error
	if err := oldMembers(b, func(key, v []byte) bool {
		if string(key) == "metadata" {
			if meta != nil {
				bad = oldErrDuplicate("metadata")
			}
			meta = v
		}
		return bad == nil
	}); err != nil || bad != nil {
		return oldItemMeta{}, fmt.Errorf("reading a list item: %w", errors.Join(err, bad))
	}
	if meta == nil {
		return oldItemMeta{}, errors.New("reading a list item: it has no metadata")
	}
	var seen [4]bool
	var deleted string
	err := oldMembers(meta, func(key, v []byte) bool {
		var dst *string
		var n int
		switch string(key) {
		case "namespace":
			dst, n = &m.namespace, 0
		case "name":
			dst, n = &m.name, 1
		case "uid":
			dst, n = (*string)(&m.uid), 2
		case "deletionTimestamp":
			dst, n = &deleted, 3
		default:
			return true
		}
		if seen[n] {
			bad = oldErrDuplicate(string(key))
			return false
		}
		seen[n] = true
		if string(v) == "null" {
			*dst = ""
			return true
		}
		text, e := oldUnquote(v)
		if e != nil {
			bad = e
			return false
		}
		*dst = string(text)
		return true
	})
	if err = errors.Join(err, bad); err != nil {
		return oldItemMeta{}, fmt.Errorf("reading a list item: %w", err)
	}
	m.deleting = deleted != ""
	return m, nil
}

// The hand-written splitter this package had before, for comparison.
func BenchmarkOldJSONItems(b *testing.B) {
	body := objectListBody(b)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		n := 0
		_, err := oldJSONItems(bufio.NewReader(bytes.NewReader(body)), func(item []byte, _ bool) error {
			_, err := oldJSONMeta(item)
			n++
			return err
		})
		if err != nil || n != 3333 {
			b.Fatal(n, err)
		}
	}
}
