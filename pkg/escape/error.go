package escape

import (
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Error is err's message as kubectl prints it, made safe: the line breaks
// and tabs of the plugin's own messages and of cobra's are kept (cobra's
// "Did you mean this?" lists its suggestions on lines of their own), each
// line is escaped as Text escapes it, and the text of every error in
// err's chain that the cluster wrote, an API status (a server's or an
// admission webhook's message) or one marked with Remote, is escaped
// whole first, newlines included, so that it stays on its line: the
// cluster cannot fake a line of the plugin's output. An error quotes such
// text by wrapping it (%w), which every error of the plugin does.
func Error(err error) string {
	msg := err.Error()
	for _, s := range remoteTexts(err, nil) {
		msg = strings.ReplaceAll(msg, s, Text(s))
	}
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	for i, l := range lines {
		lines[i] = keepTabs(l)
	}
	return strings.Join(lines, "\n")
}

// keepTabs is Text of one line that keeps its tabs, which cannot fake a
// line and which cobra indents its suggestions with.
func keepTabs(line string) string {
	parts := strings.Split(line, "\t")
	for i, p := range parts {
		parts[i] = Text(p)
	}
	return strings.Join(parts, "\t")
}

// remoteTexts appends the messages of the outermost errors of err's chain
// that the cluster wrote: their text holds that of the errors they wrap.
func remoteTexts(err error, texts []string) []string {
	if err == nil {
		return texts
	}
	_, status := err.(apierrors.APIStatus)
	if _, marked := err.(*RemoteError); status || marked {
		if s := err.Error(); s != "" {
			texts = append(texts, s)
		}
		return texts
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return remoteTexts(u.Unwrap(), texts)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			texts = remoteTexts(e, texts)
		}
	case interface{ Errors() []error }: // apimachinery's Aggregate
		for _, e := range u.Errors() {
			texts = remoteTexts(e, texts)
		}
	}
	return texts
}

// RemoteError marks an error whose text the cluster chose, other than an
// API status (which Error knows by its type): a response body that does
// not decode, quoted in the decoder's error.
type RemoteError struct{ Err error }

// Remote marks err's text as the cluster's; nil stays nil.
func Remote(err error) error {
	if err == nil {
		return nil
	}
	return &RemoteError{Err: err}
}

func (e *RemoteError) Error() string { return e.Err.Error() }
func (e *RemoteError) Unwrap() error { return e.Err }
