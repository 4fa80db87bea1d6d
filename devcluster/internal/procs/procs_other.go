//go:build !linux

package procs

import "syscall"

// sysProcAttr puts the child in its own process group, so a Ctrl-C in the
// terminal reaches only devcluster. Without Pdeathsig outside Linux, children
// outlive a devcluster that is killed hard.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
