//go:build tools

// Package tools pins kube-apiserver's main package so that `go mod tidy`
// keeps every module the test-bed build needs.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
