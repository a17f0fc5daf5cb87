// Command serve serves a directory over HTTP on 127.0.0.1, for make
// release-check's offline krew installs: it prints its base URL, then
// serves until it is killed.
//
//	go run ./hack/release/serve DIR
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: serve DIR")
		os.Exit(2)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	fmt.Printf("http://%s\n", l.Addr())
	if err := http.Serve(l, http.FileServer(http.Dir(os.Args[1]))); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
