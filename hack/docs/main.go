// Command docs writes docs/usage.md from the cobra commands.
package main

import (
	"fmt"
	"os"

	"github.com/captf-io/kubectl-captf/pkg/cmd"
)

func main() {
	if err := os.WriteFile("docs/usage.md", []byte(cmd.UsageMarkdown()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
