package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/captf-io/kubectl-captf/pkg/escape"
	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// The lists of ten thousand Leases, pods or CAPTF objects are read straight
// from the response body, one item at a time: each item is decoded into
// the few fields the verdicts need and dropped before the next, so memory
// follows the results, not the bytes the server sends (managedFields
// included), and no list is ever held whole. Built-in types arrive as
// protobuf (the client asks for it); CAPTF's kinds, which the API server
// serves as JSON only, arrive as JSON. Both are told apart by the protobuf
// envelope's magic number. Every list is one unpaged request: the stream
// keeps memory flat whatever its size, one list is one snapshot, and the
// API server answers it from its watch cache (docs/benchmarks.md measured
// pages of 500 at up to 3.5 times the time of one list).

// protobufMagic starts every protobuf response of the API server.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00} // "k8s\0"

// itemFunc takes one list item's encoded bytes: protobuf when proto is
// true, else JSON. The bytes are only valid during the call.
type itemFunc func(b []byte, proto bool) error

// listPath is where a list is read: "/api/v1" or "/apis/<group>/<version>",
// the resource, and its namespace ("" for all).
type listPath struct {
	prefix, resource, namespace string
}

// stream lists path in one request, handing every item to item as it is
// read.
func stream(ctx context.Context, rc rest.Interface, p listPath, selector string, item itemFunc) error {
	req := rc.Get().AbsPath(p.prefix).Namespace(p.namespace).Resource(p.resource)
	if selector != "" {
		req = req.Param("labelSelector", selector)
	}
	body, err := req.Stream(ctx)
	if err != nil {
		return err
	}
	defer body.Close()
	return listItems(body, item)
}

// listItems reads a list response, protobuf or JSON.
func listItems(body io.Reader, item itemFunc) error {
	r := bufio.NewReaderSize(body, 64<<10)
	if head, err := r.Peek(len(protobufMagic)); err == nil && bytes.Equal(head, protobufMagic) {
		_, _ = r.Discard(len(protobufMagic))
		return protobufItems(r, item)
	}
	return jsonItems(r, item)
}

// maxItem bounds the size of one item, as the API server's own limits do
// (an object is at most a few megabytes in etcd).
const maxItem = 64 << 20

// maxField bounds any length-delimited field, the whole list included: far
// beyond any response, and small enough that no length turns negative.
const maxField = 1 << 40

// protobufItems reads a list in the API server's protobuf envelope, a
// runtime.Unknown whose field 2 (raw) is the list, whose fields 2 are its
// items, from r to its end.
func protobufItems(r *bufio.Reader, item itemFunc) error {
	var buf []byte
	raw := false
	err := eachField(r, -1, func(field protowire.Number, n uint64) error {
		if field != 2 {
			// The envelope's typeMeta is checked as the library checks
			// it; its content type and encoding are strings.
			return checkField(r, n, field == 1, func(b []byte) error { return new(runtime.TypeMeta).Unmarshal(b) })
		}
		if raw {
			return errors.New("a protobuf list response holds two lists")
		}
		raw = true
		return eachField(r, int64(n), func(field protowire.Number, n uint64) error {
			if field != 2 {
				// The list's metadata, checked as the library does.
				return checkField(r, n, field == 1, func(b []byte) error { return new(metav1.ListMeta).Unmarshal(b) })
			}
			var err error
			if buf, err = readN(r, buf, n); err != nil {
				return err
			}
			return item(buf, true)
		})
	})
	if err == nil && !raw {
		err = errors.New("a protobuf list response holds no list")
	}
	return err
}

// checkField reads a field of n bytes that is not an item: decoded by
// check when decode is set, so that a body the library refuses is refused
// here too, else skipped.
func checkField(r *bufio.Reader, n uint64, decode bool, check func([]byte) error) error {
	if !decode {
		_, err := r.Discard(int(n))
		return truncated(err)
	}
	b, err := readN(r, nil, n)
	if err != nil {
		return err
	}
	if err := check(b); err != nil {
		return fmt.Errorf("a protobuf list's metadata does not decode: %w", err)
	}
	return nil
}

func readN(r *bufio.Reader, buf []byte, n uint64) ([]byte, error) {
	if n > maxItem {
		return nil, fmt.Errorf("a list item of %d bytes is larger than any object can be", n)
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	_, err := io.ReadFull(r, buf)
	return buf, truncated(err)
}

// eachField reads the fields of a protobuf message of size bytes (until EOF
// when size is -1) from a stream, calling fn for each length-delimited one,
// which must consume exactly its n bytes; fields of the other wire types
// are skipped. Tags are read as protowire decodes them.
func eachField(r *bufio.Reader, size int64, fn func(field protowire.Number, n uint64) error) error {
	cr := &countingReader{r: r}
	for size < 0 || cr.n < size {
		before := cr.n
		tag, err := binary.ReadUvarint(cr)
		if err == io.EOF && size < 0 && cr.n == before {
			return nil
		}
		if err != nil {
			return truncated(err)
		}
		field, wire := protowire.DecodeTag(tag)
		if field < protowire.MinValidNumber {
			return errors.New("a protobuf field has an invalid number")
		}
		if field <= 4 && wire != protowire.BytesType {
			// Every field the library knows here is length-delimited: the
			// envelope's typeMeta, raw list, content encoding and type,
			// the list's metadata and items. Others it skips, as here.
			return fmt.Errorf("a protobuf list's field %d is not length-delimited", field)
		}
		switch wire {
		case protowire.VarintType:
			_, err = binary.ReadUvarint(cr)
		case protowire.Fixed64Type:
			err = cr.discard(8)
		case protowire.Fixed32Type:
			err = cr.discard(4)
		case protowire.BytesType:
			var n uint64
			if n, err = binary.ReadUvarint(cr); err == nil {
				if n > maxField || (size >= 0 && int64(n) > size-cr.n) {
					return errors.New("a protobuf field overruns its message")
				}
				err = fn(field, n)
				cr.n += int64(n)
			}
		default:
			err = fmt.Errorf("protobuf wire type %d is not one the API server sends", wire)
		}
		if err != nil {
			return truncated(err)
		}
	}
	if cr.n != size {
		return errors.New("a protobuf list overran its length")
	}
	return nil
}

func truncated(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// countingReader counts the bytes eachField reads itself.
type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

func (c *countingReader) discard(n int) error {
	d, err := c.r.Discard(n)
	c.n += int64(d)
	return err
}

// eachRawField calls fn with each field of a protobuf message held whole:
// its number, its bytes (tag included) and, for a length-delimited field,
// its payload. A field that does not parse is an error.
func eachRawField(b []byte, fn func(field protowire.Number, whole, payload []byte) error) error {
	for len(b) > 0 {
		field, wire, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("a protobuf tag does not parse: %w", protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(field, wire, b[n:])
		if m < 0 {
			return fmt.Errorf("a protobuf field does not parse: %w", protowire.ParseError(m))
		}
		var payload []byte
		if wire == protowire.BytesType {
			payload, _ = protowire.ConsumeBytes(b[n:])
		}
		if err := fn(field, b[:n+m], payload); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}

// withoutManagedFields returns b, an object in protobuf, with the
// managedFields of its metadata left out (field 17 of ObjectMeta, field 1
// of every object), appended to out[:0]. Nothing here reads them, and they
// are most of what decoding a Lease allocates.
func withoutManagedFields(b, out []byte) ([]byte, error) {
	out = out[:0]
	err := eachRawField(b, func(field protowire.Number, whole, meta []byte) error {
		if field != 1 || meta == nil {
			out = append(out, whole...)
			return nil
		}
		// The kept fields' size first, then the fields themselves, straight
		// into out: no buffer of their own for each item.
		size := 0
		if err := eachRawField(meta, func(field protowire.Number, whole, _ []byte) error {
			if field != 17 {
				size += len(whole)
			}
			return nil
		}); err != nil {
			return err
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendVarint(out, uint64(size))
		return eachRawField(meta, func(field protowire.Number, whole, _ []byte) error {
			if field != 17 {
				out = append(out, whole...)
			}
			return nil
		})
	})
	return out, err
}

// protoName reads an object's name from its protobuf (field 1 of its
// ObjectMeta, which is its field 1) without decoding the rest: the last
// one, as decoding merges repeated fields. ok is false when b does not
// parse; the item is then decoded, and its error reported.
func protoName(b []byte) (name string, ok bool) {
	err := eachRawField(b, func(field protowire.Number, _, meta []byte) error {
		if field != 1 || meta == nil {
			return nil
		}
		return eachRawField(meta, func(field protowire.Number, _, v []byte) error {
			if field == 1 && v != nil {
				name, ok = string(v), true
			}
			return nil
		})
	})
	return name, ok && err == nil
}

// jsonItems reads a list object in JSON from r, handing each item of its
// "items" to item. It reads with encoding/json's decoder, so it refuses
// whatever that refuses: the list as a whole is valid JSON, or an error.
func jsonItems(r io.Reader, item itemFunc) error {
	dec := json.NewDecoder(r)
	if err := delim(dec, '{'); err != nil {
		return err
	}
	items := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return listError(err)
		}
		if key, _ := t.(string); key != "items" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return listError(err)
			}
			continue
		}
		if items {
			return errors.New("reading a list response: it has two items")
		}
		items = true
		switch t, err := dec.Token(); {
		case err != nil:
			return listError(err)
		case t == nil:
			continue // null: no items
		case t != json.Delim('['):
			return listError(fmt.Errorf("items is %v, not an array", t))
		}
		var raw json.RawMessage // reused: an item's bytes are only valid during its call
		for dec.More() {
			if err := dec.Decode(&raw); err != nil {
				return listError(err)
			}
			if len(raw) > maxItem {
				return fmt.Errorf("a list item of %d bytes is larger than any object can be", len(raw))
			}
			if err := item(raw, false); err != nil {
				return err
			}
		}
		if err := delim(dec, ']'); err != nil {
			return err
		}
	}
	if err := delim(dec, '}'); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return listError(errors.Join(err, errors.New("more follows the list")))
	}
	return nil
}

// delim reads the next token, which must be d.
func delim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err == nil && t != d {
		err = fmt.Errorf("%v where %v belongs", t, d)
	}
	return listError(err)
}

func listError(err error) error {
	if err == nil {
		return nil
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("reading a list response: %w", escape.Remote(err)) // it quotes the body
}
