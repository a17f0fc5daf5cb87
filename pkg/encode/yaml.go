package encode

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/captf-io/kubectl-captf/pkg/escape"
)

// YAML writes v, anything encoding/json encodes, as cli-runtime's YAML
// printer does (sigs.k8s.io/yaml: the JSON encoding, then YAML with
// kubectl's layout and quoting), except for the strings that printer
// cannot write: it fails on a C1 control or U+FFFF and turns U+0085 into
// a space. Each string holding a Hidden character is written instead as a
// double-quoted scalar with YAML's escapes, so every string parses back to
// itself and none reaches the output raw.
func YAML(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	// Each such string is replaced by a token that YAML writes as a plain
	// scalar, and the token in the output by the quoted string. The nonce
	// makes the tokens text that no string of v holds.
	nonce := make([]byte, 8)
	for {
		_, _ = rand.Read(nonce)
		if !bytes.Contains(b, []byte(hex.EncodeToString(nonce))) {
			break
		}
	}
	p := &placeholders{prefix: "captf" + hex.EncodeToString(nonce) + "n"}
	if b, err = json.Marshal(p.replace(tree)); err != nil {
		return nil, err
	}
	out, err := yaml.JSONToYAML(b)
	if err != nil {
		return nil, err
	}
	if len(p.quoted) == 0 {
		return out, nil
	}
	pairs := make([]string, 0, 2*len(p.quoted))
	for n, q := range p.quoted {
		pairs = append(pairs, p.token(n), q)
	}
	return []byte(strings.NewReplacer(pairs...).Replace(string(out))), nil
}

// placeholders replaces the strings YAML cannot carry by tokens.
type placeholders struct {
	prefix string
	// quoted are the double-quoted forms of the replaced strings, by
	// token number; long marks the keys too long to be implicit.
	quoted []string
	long   map[int]bool
}

// token n is prefix, n in six digits and an "x": no token is the start of
// another. The token of a long key is padded past 128 characters, so that
// YAML writes it as an explicit key ("? key"): an implicit key may not be
// longer than 1024 characters.
func (p *placeholders) token(n int) string {
	t := fmt.Sprintf("%s%06dx", p.prefix, n)
	if p.long[n] {
		t += strings.Repeat("x", 128)
	}
	return t
}

// str is s, or a token for it when it holds a Hidden character, a
// newline included (YAML would write it raw, in a literal block, where a
// holder's line reads as the document's own), or it is one of the keys
// YAML gives a meaning (the merge key "<<", YAML 1.1's value key "="),
// which sigs.k8s.io/yaml leaves bare.
func (p *placeholders) str(s string, key bool) string {
	if s != "<<" && s != "=" && !hasHidden(s) {
		return s
	}
	q := doubleQuoted(s)
	p.quoted = append(p.quoted, q)
	n := len(p.quoted) - 1
	if key && len(q) > 1000 {
		if p.long == nil {
			p.long = map[int]bool{}
		}
		p.long[n] = true
	}
	return p.token(n)
}

func (p *placeholders) replace(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[p.str(k, true)] = p.replace(e)
		}
		return out
	case []any:
		for i, e := range v {
			v[i] = p.replace(e)
		}
		return v
	case string:
		return p.str(v, false)
	}
	return v
}

// doubleQuoted is s as a YAML double-quoted scalar on one line: the
// quote and the backslash escaped, newline and tab as \n and \t, every
// other Hidden character as a \x, \u or \U escape, anything else as it is.
func doubleQuoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x100 && escape.Hidden(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case escape.Hidden(r):
			b.WriteString(escape.Code(r))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
