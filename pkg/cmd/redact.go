package cmd

import "regexp"

// userinfoPassword matches the password of a URL's userinfo, both as
// scheme://user:password@host and as the opaque scheme:user:password@host
// that net/url parses and client-go takes for a proxy.
var userinfoPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*:(?://)?[^\s/@:"]*:)[^\s/@"]*@`)

// withoutPasswords is msg with every URL's userinfo password written
// "xxxxx", as net/url's URL.Redacted writes it. client-go quotes a
// proxy-url it cannot use whole in its configuration error, password
// included, whether it came from --proxy-url or from the kubeconfig;
// the plugin never prints a credential (review28 n2).
func withoutPasswords(msg string) string {
	return userinfoPassword.ReplaceAllString(msg, "${1}xxxxx@")
}
