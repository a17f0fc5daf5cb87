//go:build tools

// Package tools pins the main packages of kube-apiserver and kubectl so
// that `go mod tidy` keeps every module the test-bed build needs.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
