package testbed

import "syscall"

// dieWithParent has the kernel kill the server when the process that
// started it dies, even when a panicking test skips Stop.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
