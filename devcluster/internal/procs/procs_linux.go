package procs

import "syscall"

// sysProcAttr puts the child in its own process group, so a Ctrl-C in the
// terminal reaches only devcluster (which then stops children in order), and
// has the kernel SIGKILL the child if devcluster dies without cleaning up.
// Pdeathsig fires when the spawning OS thread exits; the Go runtime keeps its
// threads for the process lifetime unless a goroutine exits while locked to
// one, which devcluster never does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
