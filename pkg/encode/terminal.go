package encode

import (
	"encoding/json"

	"github.com/captf-io/kubectl-captf/pkg/escape"
)

// ForTerminal is v, anything encoding/json encodes, as the generic value
// JSON decodes it to (maps, slices, strings, numbers), with every string
// and key passed through escape.Text: what a template (-o jsonpath,
// -o go-template) prints to a terminal, where the cluster's text must not
// act on the screen. It is not lossless; for a pipe or a file, print v
// itself.
func ForTerminal(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return escapeAll(m).(map[string]any), nil
}

func escapeAll(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[escape.Text(k)] = escapeAll(e)
		}
		return out
	case []any:
		for i, e := range v {
			v[i] = escapeAll(e)
		}
		return v
	case string:
		return escape.Text(v)
	}
	return v
}
