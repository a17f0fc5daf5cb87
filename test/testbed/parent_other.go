//go:build !linux

package testbed

import "syscall"

// dieWithParent does nothing where there is no parent-death signal
// (macOS): the test-bed still builds there, for `make demo`, whose
// servers are detached and outlive it anyway; a test's servers end with
// Stop.
func dieWithParent(*syscall.SysProcAttr) {}
