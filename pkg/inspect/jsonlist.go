package inspect

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/types"
)

// A JSON list of CAPTF objects is split into its items by their nesting
// alone: the bytes of each item are found by counting brackets outside
// strings, and only the items that are wanted whole are decoded. A full
// JSON decoder (or jsoniter's skip, which reads every key it passes as a
// string) spends most of a 10,000-object list on objects read only for
// their names. The syntax is the API server's; what does not split as
// JSON does is an error here or when the item is decoded.

// nesting follows a JSON value a byte at a time, as far as telling where
// it ends: the depth of its brackets and whether a string is open.
type nesting struct {
	depth            int
	inString, escape bool
}

// step takes the value's next byte and says whether it ended the value,
// which starts with a bracket or a quote.
func (n *nesting) step(c byte) bool {
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

// isDelimiter ends a number or a literal.
func isDelimiter(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// readValue appends to buf the JSON value r is at, whose first byte c was
// just read.
func readValue(r *bufio.Reader, c byte, buf []byte) ([]byte, error) {
	buf = append(buf, c)
	if c != '{' && c != '[' && c != '"' {
		for {
			c, err := r.ReadByte()
			if err != nil {
				return buf, truncated(err)
			}
			if isDelimiter(c) {
				return buf, r.UnreadByte()
			}
			buf = append(buf, c)
		}
	}
	var n nesting
	n.step(c)
	for {
		c, err := r.ReadByte()
		if err != nil {
			return buf, truncated(err)
		}
		buf = append(buf, c)
		if n.step(c) {
			return buf, nil
		}
	}
}

// valueLen is the length of the JSON value b starts with.
func valueLen(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	if c := b[0]; c != '{' && c != '[' && c != '"' {
		for i, c := range b {
			if isDelimiter(c) {
				return i, nil
			}
		}
		return len(b), nil
	}
	var n nesting
	for i, c := range b {
		if n.step(c) {
			return i + 1, nil
		}
	}
	return 0, io.ErrUnexpectedEOF
}

// nextByte is r's next byte that is not white space.
func nextByte(r *bufio.Reader) (byte, error) {
	for {
		c, err := r.ReadByte()
		if err != nil || !isSpace(c) {
			return c, truncated(err)
		}
	}
}

// errNotJSONList is a response that is not a JSON object with a list.
var errNotJSONList = errors.New("the response is not a JSON list")

// jsonItems reads a JSON list: each element of "items" in turn, and the
// continue token of "metadata".
func jsonItems(body io.Reader, item itemFunc) (string, error) {
	r, ok := body.(*bufio.Reader)
	if !ok {
		r = bufio.NewReaderSize(body, 64<<10)
	}
	if c, err := nextByte(r); err != nil || c != '{' {
		return "", listError(err)
	}
	cont := ""
	buf := make([]byte, 0, 16<<10)
	for {
		c, err := nextByte(r)
		switch {
		case err != nil:
			return "", listError(err)
		case c == '}':
			return cont, nil
		case c == ',':
			continue
		case c != '"':
			return "", errNotJSONList
		}
		if buf, err = readValue(r, c, buf[:0]); err != nil {
			return "", listError(err)
		}
		var key string
		if err := json.Unmarshal(buf, &key); err != nil {
			return "", listError(err)
		}
		if c, err = nextByte(r); err != nil || c != ':' {
			return "", listError(err)
		}
		if c, err = nextByte(r); err != nil {
			return "", listError(err)
		}
		if key == "items" && c == '[' {
			if err := jsonArray(r, item, buf); err != nil {
				return "", err
			}
			continue
		}
		if buf, err = readValue(r, c, buf[:0]); err != nil {
			return "", listError(err)
		}
		if key == "metadata" {
			var m struct {
				Continue string `json:"continue"`
			}
			if err := json.Unmarshal(buf, &m); err != nil {
				return "", listError(err)
			}
			cont = m.Continue
		}
	}
}

// jsonArray hands on each object of the array r is in, after its "[".
func jsonArray(r *bufio.Reader, item itemFunc, buf []byte) error {
	for {
		c, err := nextByte(r)
		switch {
		case err != nil:
			return listError(err)
		case c == ']':
			return nil
		case c == ',':
			continue
		case c != '{':
			return errNotJSONList
		}
		if buf, err = readValue(r, c, buf[:0]); err != nil {
			return listError(err)
		}
		if err := item(buf, false); err != nil {
			return err
		}
	}
}

func listError(err error) error {
	if err == nil {
		err = errNotJSONList
	}
	return fmt.Errorf("reading a list response: %w", err)
}

// members calls fn with the key and value of each member of the JSON
// object b, until fn returns false.
func members(b []byte, fn func(key string, value []byte) bool) error {
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
		n, err := valueLen(b)
		if err != nil || b[0] != '"' {
			return fmt.Errorf("a list item is not a JSON object: %v", err)
		}
		var key string
		if err := json.Unmarshal(b[:n], &key); err != nil {
			return err
		}
		b = bytes.TrimLeft(b[n:], " \t\r\n")
		if len(b) == 0 || b[0] != ':' {
			return errors.New("a list item is not a JSON object")
		}
		b = bytes.TrimLeft(b[1:], " \t\r\n")
		if n, err = valueLen(b); err != nil {
			return err
		}
		if !fn(key, b[:n]) {
			return nil
		}
		b = b[n:]
	}
}

// jsonMeta reads an object's namespace, name and UID from its JSON,
// skipping everything else.
func jsonMeta(b []byte) (namespace, name string, uid types.UID, err error) {
	var meta []byte
	if err = members(b, func(key string, v []byte) bool {
		if key == "metadata" {
			meta = v // the last one, as a JSON decoder keeps
		}
		return true
	}); err != nil || meta == nil {
		return "", "", "", fmt.Errorf("reading a list item: no metadata (%v)", err)
	}
	err = members(meta, func(key string, v []byte) bool {
		var dst *string
		switch key {
		case "namespace":
			dst = &namespace
		case "name":
			dst = &name
		case "uid":
			dst = (*string)(&uid)
		default:
			return true
		}
		if e := json.Unmarshal(v, dst); e != nil {
			err = e
		}
		return err == nil
	})
	if err != nil {
		return "", "", "", fmt.Errorf("reading a list item: %w", err)
	}
	return namespace, name, uid, nil
}
