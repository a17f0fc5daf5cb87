package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

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
		for n := range items {
			item, err := json.MarshalIndent(&items[n], itemPrefix, indent)
			if err != nil {
				return err
			}
			if n > 0 {
				_ = w.WriteByte(',')
			}
			_, _ = w.WriteString("\n" + itemPrefix)
			if _, err := w.Write(encode.JSON(item)); err != nil {
				return err
			}
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
