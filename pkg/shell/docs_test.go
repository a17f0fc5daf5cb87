package shell

import (
	"os"
	"regexp"
	"testing"
)

// docs/output.md lists the characters an argument may hold and stay
// unquoted; the list is the one plain keeps, character for character.
func TestDocsListThePlainCharacters(t *testing.T) {
	b, err := os.ReadFile("../../docs/output.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("plain letters, digits and `([^`]+)`").FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/output.md no longer lists the plain characters as \"plain letters, digits and `…`\"")
	}
	documented := map[rune]bool{}
	for _, c := range string(m[1]) {
		documented[c] = true
	}
	// Every printable ASCII character that is not a letter or a digit.
	for c := rune('!'); c <= '~'; c++ {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			if !plain(string(c)) {
				t.Errorf("%q is not plain", c)
			}
			continue
		}
		if plain(string(c)) != documented[c] {
			t.Errorf("%q: plain %v, in docs/output.md's list %v", c, plain(string(c)), documented[c])
		}
	}
	for c := range documented {
		if c > '~' || c < '!' {
			t.Errorf("docs/output.md lists %q, which is no printable ASCII character", c)
		}
	}
}
