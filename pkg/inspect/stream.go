package inspect

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// The lists of ten thousand Leases, pods or CAPTF objects are read
// straight from the response body, one item at a time: each item is decoded
// into the few fields the verdicts need and dropped before the next, so
// memory follows the results, not the bytes the server sends (managedFields
// included), and no page is ever held whole. Built-in types arrive as
// protobuf (the client asks for it); CAPTF's kinds, which the API server
// serves as JSON only, arrive as JSON. Both are told apart by the
// protobuf envelope's magic number.

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

// stream lists path page by page (PageSize items each, or all at once when
// PageSize is negative), handing every item to item as it is read. When a
// continue token expires mid-way, it starts over with one unpaged list, as
// kubectl does, and calls restart first so that the caller drops what the
// earlier pages gave.
func (i *Inspector) stream(ctx context.Context, rc rest.Interface, p listPath, selector string, restart func(), item itemFunc) error {
	limit := i.pageSize()
	cont := ""
	for {
		req := rc.Get().AbsPath(p.prefix).Namespace(p.namespace).Resource(p.resource)
		if selector != "" {
			req = req.Param("labelSelector", selector)
		}
		if limit > 0 {
			req = req.Param("limit", strconv.FormatInt(limit, 10))
		}
		if cont != "" {
			req = req.Param("continue", cont)
		}
		next, err := readPage(ctx, req, item)
		if apierrors.IsResourceExpired(err) && cont != "" {
			restart()
			limit, cont = 0, ""
			continue
		}
		if err != nil || next == "" {
			return err
		}
		cont = next
	}
}

// readPage reads one page and returns its continue token.
func readPage(ctx context.Context, req *rest.Request, item itemFunc) (string, error) {
	body, err := req.Stream(ctx)
	if err != nil {
		return "", err
	}
	defer body.Close()
	r := bufio.NewReaderSize(body, 64<<10)
	if head, err := r.Peek(len(protobufMagic)); err == nil && bytes.Equal(head, protobufMagic) {
		_, _ = r.Discard(len(protobufMagic))
		return protobufItems(r, item)
	}
	return jsonItems(r, item)
}

// protobufItems reads a list in the API server's protobuf envelope: a
// runtime.Unknown whose field 2 (raw) is the list, whose field 1 is its
// ListMeta and whose fields 2 are its items.
func protobufItems(r *bufio.Reader, item itemFunc) (string, error) {
	cont := ""
	var buf []byte
	err := eachField(r, -1, func(field int, n uint64) error {
		if field != 2 {
			_, err := r.Discard(int(n))
			return err
		}
		return eachField(r, int64(n), func(field int, n uint64) error {
			var err error
			if buf, err = readN(r, buf, n); err != nil {
				return err
			}
			switch field {
			case 1:
				var m metav1.ListMeta
				if err := m.Unmarshal(buf); err != nil {
					return err
				}
				cont = m.Continue
			case 2:
				return item(buf, true)
			}
			return nil
		})
	})
	return cont, err
}

// maxItem bounds the size of one item, as the API server's own limits do
// (an object is at most a few megabytes in etcd).
const maxItem = 64 << 20

func readN(r *bufio.Reader, buf []byte, n uint64) ([]byte, error) {
	if n > maxItem {
		return nil, fmt.Errorf("a list item of %d bytes is larger than any object can be", n)
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	_, err := io.ReadFull(r, buf)
	return buf, err
}

// eachField reads the fields of a protobuf message of size bytes (until EOF
// when size is -1), calling fn for each length-delimited one, which must
// consume exactly its n bytes; fields of other wire types are skipped.
func eachField(r *bufio.Reader, size int64, fn func(field int, n uint64) error) error {
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
		field, wire := int(tag>>3), tag&7
		switch wire {
		case 0:
			_, err = binary.ReadUvarint(cr)
		case 1:
			_, err = cr.discard(8)
		case 5:
			_, err = cr.discard(4)
		case 2:
			var n uint64
			if n, err = binary.ReadUvarint(cr); err == nil {
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

func (c *countingReader) discard(n int) (int, error) {
	d, err := c.r.Discard(n)
	c.n += int64(d)
	return d, err
}

// withoutManagedFields returns b, an object in protobuf, with the
// managedFields of its metadata left out (field 17 of ObjectMeta, field 1
// of every object), appended to out[:0]. Nothing here reads them, and they
// are most of what decoding a Lease allocates.
func withoutManagedFields(b, out []byte) ([]byte, error) {
	out = out[:0]
	err := eachRawField(b, func(field int, whole, payload []byte) error {
		if field != 1 || payload == nil {
			out = append(out, whole...)
			return nil
		}
		kept := 0
		if err := eachRawField(payload, func(field int, whole, _ []byte) error {
			if field != 17 {
				kept += len(whole)
			}
			return nil
		}); err != nil {
			return err
		}
		out = binary.AppendUvarint(append(out, 1<<3|2), uint64(kept))
		return eachRawField(payload, func(field int, whole, _ []byte) error {
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
	err := eachRawField(b, func(field int, _, meta []byte) error {
		if field != 1 || meta == nil {
			return nil
		}
		return eachRawField(meta, func(field int, _, v []byte) error {
			if field == 1 && v != nil {
				name, ok = string(v), true
			}
			return nil
		})
	})
	return name, ok && err == nil
}

// eachRawField calls fn with each field of a protobuf message: its number,
// its bytes (tag included) and, for a length-delimited field, its payload.
func eachRawField(b []byte, fn func(field int, whole, payload []byte) error) error {
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			return errors.New("a protobuf tag does not parse")
		}
		size, payload := 0, []byte(nil)
		switch tag & 7 {
		case 0:
			if _, m := binary.Uvarint(b[n:]); m > 0 {
				size = n + m
			}
		case 1:
			size = n + 8
		case 5:
			size = n + 4
		case 2:
			if l, m := binary.Uvarint(b[n:]); m > 0 && l <= uint64(len(b)-n-m) {
				size = n + m + int(l)
				payload = b[n+m : size]
			}
		}
		if size == 0 || size > len(b) {
			return errors.New("a protobuf field overruns its message")
		}
		if err := fn(int(tag>>3), b[:size], payload); err != nil {
			return err
		}
		b = b[size:]
	}
	return nil
}
