package cmd

import "testing"

// A URL's password never reaches the terminal, in either form client-go
// takes for a proxy; the rest of the message stays as it was.
func TestWithoutPasswords(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`invalid 'proxy-url' "http://ops:s3cret@%zz" for cluster "": could not parse: http://ops:s3cret@%zz`,
			`invalid 'proxy-url' "http://ops:xxxxx@%zz" for cluster "": could not parse: http://ops:xxxxx@%zz`},
		{`could not parse: http:ops:s3cret@proxy:3128`, `could not parse: http:ops:xxxxx@proxy:3128`},
		{`Get "https://127.0.0.1:6443/api": dial tcp 127.0.0.1:6443: connect: connection refused`,
			`Get "https://127.0.0.1:6443/api": dial tcp 127.0.0.1:6443: connect: connection refused`},
		{`user alice@laptop holds the lock`, `user alice@laptop holds the lock`},
		{`socks5://ops@proxy:1080 has no password`, `socks5://ops@proxy:1080 has no password`},
	} {
		if got := withoutPasswords(c.in); got != c.want {
			t.Errorf("withoutPasswords(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
