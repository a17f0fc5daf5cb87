//go:build tools

// Package tools pins OpenTofu's main package so that `go mod tidy` keeps
// every module the test-bed build needs.
package tools

import _ "github.com/opentofu/opentofu/cmd/tofu"
