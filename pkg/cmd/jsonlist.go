package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
)

// writeLockList writes a LockList as cli-runtime's JSON printer does
// (json.MarshalIndent with four spaces, then a newline), but one item at a
// time, straight to the stream: the printer builds the whole document,
// and an indented copy of it, before writing a byte, which at ten
// thousand locks is most of the command's memory. Each item is dropped
// from the list once written.
func writeLockList(out io.Writer, list *v1alpha1.LockList) error {
	items := list.Items
	shell := *list
	shell.Items = []v1alpha1.Lock{}
	head, err := json.MarshalIndent(&shell, "", "    ")
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
		for n := range items {
			b, err := json.MarshalIndent(&items[n], "        ", "    ")
			if err != nil {
				return err
			}
			if n > 0 {
				_ = w.WriteByte(',')
			}
			_, _ = w.WriteString("\n        ")
			_, _ = w.Write(b)
			items[n] = v1alpha1.Lock{}
		}
		_, _ = w.WriteString("\n    ]")
		_, _ = w.Write(head[at+len(empty):])
	}
	_ = w.WriteByte('\n')
	return w.Flush() // the writer keeps the first error and returns it here
}
