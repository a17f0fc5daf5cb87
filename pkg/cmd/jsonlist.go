package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"sync"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
)

// writeLockList writes a LockList as cli-runtime's JSON printer does
// (json.MarshalIndent with four spaces, then a newline), but one chunk of
// items at a time, straight to the stream: the printer builds the whole
// document, and an indented copy of it, before writing a byte, which at
// ten thousand locks is most of the command's memory. Each item is dropped
// from the list once encoded.
func writeLockList(out io.Writer, list *v1alpha1.LockList) error {
	items := list.Items
	shell := *list
	shell.Items = []v1alpha1.Lock{}
	head, err := json.MarshalIndent(&shell, "", indent)
	if err != nil {
		return err
	}
	const empty = `"items": []`
	at := bytes.Index(head, []byte(empty))
	w := bufio.NewWriterSize(out, 64<<10)
	if len(items) == 0 || at < 0 {
		_, _ = w.Write(head)
	} else {
		_, _ = w.Write(head[:at+len(empty)-1]) // up to and with the "["
		if err := writeItems(w, items); err != nil {
			return err
		}
		_, _ = w.WriteString("\n" + indent + "]")
		_, _ = w.Write(head[at+len(empty):])
	}
	_ = w.WriteByte('\n')
	return w.Flush() // the writer keeps the first error and returns it here
}

// indent is the printer's, and itemPrefix that of an item of the list,
// two levels in.
const (
	indent     = "    "
	itemPrefix = indent + indent
)

// itemsPerChunk is how many items one goroutine encodes at a time.
const itemsPerChunk = 256

// writeItems writes the items as the printer indents them inside the
// list, comma-separated. Encoding is most of the time the command spends
// after its reads, and the reads have left every core idle by then: the
// chunks are encoded concurrently, at most two per core (of up to eight)
// ahead of the writer, and written in order.
func writeItems(w *bufio.Writer, items []v1alpha1.Lock) error {
	type encoded struct {
		b   []byte
		err error
	}
	chunks := make([]chan encoded, (len(items)+itemsPerChunk-1)/itemsPerChunk)
	for c := range chunks {
		chunks[c] = make(chan encoded, 1)
	}
	ahead := make(chan struct{}, 2*min(runtime.GOMAXPROCS(0), 8))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// On return, and on an error above all, no encoder is left touching
	// the caller's items.
	defer func() { close(stop); wg.Wait() }()
	wg.Go(func() {
		for c := range chunks {
			select {
			case ahead <- struct{}{}:
			case <-stop:
				return
			}
			wg.Go(func() {
				b, err := encodeItems(items[c*itemsPerChunk:min((c+1)*itemsPerChunk, len(items))], c == 0)
				chunks[c] <- encoded{b, err}
			})
		}
	})
	for _, ch := range chunks {
		e := <-ch
		<-ahead
		if e.err != nil {
			return e.err
		}
		if _, err := w.Write(e.b); err != nil {
			return err
		}
	}
	return nil
}

// encodeItems encodes items as the printer indents them, each after a
// comma unless it is the list's first, and clears them.
func encodeItems(items []v1alpha1.Lock, first bool) ([]byte, error) {
	var out []byte
	for n := range items {
		b, err := json.Marshal(&items[n])
		if err != nil {
			return nil, err
		}
		if n > 0 || !first {
			out = append(out, ',')
		}
		out = indentCompact(append(out, "\n"+itemPrefix...), b, itemPrefix, indent)
		items[n] = v1alpha1.Lock{}
	}
	return out, nil
}

// indentCompact appends src, compact JSON as json.Marshal writes it, to
// dst indented exactly as json.Indent does: a newline, prefix and one
// indent per level after each opening bracket and comma, ": " after a
// key, empty objects and arrays kept as {} and []. json.Indent runs its
// full syntax scanner over every byte, half of what encoding 10,000 locks
// cost; here the text of strings is copied in runs.
func indentCompact(dst, src []byte, prefix, indent string) []byte {
	depth, open := 0, false
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if open && c != '}' && c != ']' {
			open = false
			depth++
			newline()
		}
		switch c {
		case '"':
			end := stringEnd(src, i)
			dst = append(dst, src[i:end]...)
			i = end - 1
		case '{', '[':
			open = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				newline()
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// stringEnd is the index just past the JSON string that starts at
// src[i], a quote: after the first quote that no backslash escapes.
func stringEnd(src []byte, i int) int {
	for j := i + 1; j < len(src); {
		k := bytes.IndexAny(src[j:], "\"\\")
		if k < 0 {
			return len(src)
		}
		if src[j+k] == '"' {
			return j + k + 1
		}
		j += k + 2 // a backslash and the byte it escapes
	}
	return len(src)
}
