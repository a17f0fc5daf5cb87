package escape

import (
	"bytes"
	"io"
	"strings"
)

// Writer escapes what is written through it, line by line, as Text
// escapes it, keeping the line breaks and tabs: for a template's output
// (-o go-template, -o jsonpath) on a terminal. What a template writes can
// be made of the cluster's text in ways the values alone do not show (a
// base64decode, a printf "%c"), so the output is escaped, not the values.
// A line is held until it ends, or until Flush, so that an escape sequence
// or a character split across writes is escaped whole.
type Writer struct {
	w    io.Writer
	line []byte
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes each complete line of p (and of what came before it);
// the rest waits for its end.
func (e *Writer) Write(p []byte) (int, error) {
	e.line = append(e.line, p...)
	i := bytes.LastIndexByte(e.line, '\n')
	if i < 0 {
		return len(p), nil
	}
	out := lines(e.line[:i+1])
	e.line = append(e.line[:0], e.line[i+1:]...)
	if _, err := io.WriteString(e.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush escapes and writes a last line that did not end.
func (e *Writer) Flush() error {
	if len(e.line) == 0 {
		return nil
	}
	out := lines(e.line)
	e.line = e.line[:0]
	_, err := io.WriteString(e.w, out)
	return err
}

// lines is b with each piece between line breaks and tabs escaped.
func lines(b []byte) string {
	var out strings.Builder
	start := 0
	for i, c := range b {
		if c == '\n' || c == '\t' {
			out.WriteString(Text(string(b[start:i])))
			out.WriteByte(c)
			start = i + 1
		}
	}
	out.WriteString(Text(string(b[start:])))
	return out.String()
}
