package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/encode"
)

// writeLockList writes a LockList as jsonPrinter does (the indented JSON,
// no Hidden character raw, then a newline), but one item at a time,
// straight to the stream: the whole document, and an indented copy of
// it, is never held at once, which at ten thousand locks was most of the
// command's memory.
func writeLockList(out io.Writer, list *v1alpha1.LockList) error {
	items := list.Items
	head := *list
	head.Items = []v1alpha1.Lock{}
	b, err := json.MarshalIndent(&head, "", indent)
	if err != nil {
		return err
	}
	b = encode.JSON(b) // context errors quote the clusters
	const empty = `"items": []`
	at := bytes.Index(b, []byte(empty))
	w := bufio.NewWriterSize(out, 64<<10)
	if len(items) == 0 || at < 0 {
		_, _ = w.Write(b)
	} else {
		_, _ = w.Write(b[:at+len(empty)-1]) // up to and with the "["
		if err := writeItems(w, items); err != nil {
			return err
		}
		_, _ = w.WriteString("\n" + indent + "]")
		_, _ = w.Write(b[at+len(empty):])
	}
	_ = w.WriteByte('\n')
	return w.Flush() // the writer keeps the first error and returns it here
}

// indent is the JSON printer's, and itemPrefix that of an item of the
// list, two levels in.
const (
	indent     = "    "
	itemPrefix = indent + indent
)

// indentCompact appends src, compact JSON as encoding/json writes it (no
// space outside strings: a type of the list that marshals itself must
// keep to that, or go through json.Compact first), indented as json.Indent would indent it with
// prefix and indent, to dst. It does not check src: encoding/json's
// output is valid.
func indentCompact(dst, src []byte, prefix, indent string) []byte {
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j++
			dst = append(dst, src[i:j]...)
			i = j - 1
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, c, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// itemChunk is how many items one goroutine encodes at a time.
const itemChunk = 64

// writeItems writes the items as the list's elements, each indented two
// levels in: encoded in chunks on every core, written in order, with at
// most two chunks per core encoded ahead of the writer.
func writeItems(w io.Writer, items []v1alpha1.Lock) error {
	type chunk struct {
		lo, hi int
		out    []byte
		err    error
		done   chan struct{}
	}
	workers := runtime.GOMAXPROCS(0)
	todo := make(chan *chunk)
	inOrder := make(chan *chunk, workers)
	// The chunks' buffers, reused once written.
	free := make(chan []byte, 2*workers+2)
	go func() {
		defer close(todo)
		defer close(inOrder)
		for lo := 0; lo < len(items); lo += itemChunk {
			c := &chunk{lo: lo, hi: min(lo+itemChunk, len(items)), done: make(chan struct{})}
			select {
			case c.out = <-free:
			default:
			}
			inOrder <- c
			todo <- c
		}
	}()
	// failed stops the encoding once a write failed (a closed pipe): the
	// rest would be thrown away (review26f n4).
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var compact bytes.Buffer
			enc := json.NewEncoder(&compact) // escapes HTML, as MarshalIndent does
			for c := range todo {
				for n := c.lo; n < c.hi && c.err == nil && !failed.Load(); n++ {
					compact.Reset()
					if c.err = enc.Encode(&items[n]); c.err != nil {
						break
					}
					if n > 0 {
						c.out = append(c.out, ',')
					}
					c.out = append(c.out, "\n"+itemPrefix...)
					c.out = indentCompact(c.out, encode.JSON(bytes.TrimSuffix(compact.Bytes(), []byte("\n"))), itemPrefix, indent)
				}
				close(c.done)
			}
		})
	}
	var err error
	for c := range inOrder {
		<-c.done
		if err == nil {
			if err = c.err; err == nil {
				_, err = w.Write(c.out)
			}
			failed.Store(err != nil)
		}
		select {
		case free <- c.out[:0]:
		default:
		}
	}
	wg.Wait()
	return err
}
