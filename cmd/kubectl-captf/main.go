// Command kubectl-captf is the kubectl plugin `kubectl captf`.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // OIDC and other auth providers in kubeconfigs

	"github.com/captf-io/kubectl-captf/pkg/cmd"
)

func main() {
	os.Exit(cmd.Execute(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:]))
}
