// Package procs runs the control-plane binaries as child processes that log
// to files and cannot outlive devcluster.
package procs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Proc is one child process. Start it once; after it has exited, Start may be
// called again to run the same command line anew.
type Proc struct {
	Name    string // short name for messages, e.g. "kube-apiserver"
	Path    string
	Args    []string
	LogPath string // stdout and stderr are appended here
	// Env is added to devcluster's own environment for the process
	// (KEY=VALUE; a later one wins over devcluster's).
	Env []string

	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start launches the process. Its output goes to LogPath, never the terminal.
func (p *Proc) Start() error {
	if p.Running() {
		return fmt.Errorf("%s is already running", p.Name)
	}
	log, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "\n==== devcluster: starting %s at %s ====\n", p.Name, time.Now().Format(time.RFC3339))
	cmd := exec.Command(p.Path, p.Args...)
	if len(p.Env) > 0 {
		cmd.Env = append(os.Environ(), p.Env...)
	}
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	p.cmd = cmd
	p.done = make(chan struct{})
	p.err = nil
	go func(done chan struct{}) {
		p.err = cmd.Wait()
		log.Close()
		close(done)
	}(p.done)
	return nil
}

// Done is closed when the process started last has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// PID is the process id of the last start; 0 before the first.
func (p *Proc) PID() int {
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Err is the exit status of the process started last, valid once Done is closed.
func (p *Proc) Err() error { return p.err }

// Running reports whether a started process has not exited yet.
func (p *Proc) Running() bool {
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Stop asks the process to exit with SIGTERM and kills it if it is still
// running after grace. It returns once the process is gone.
func (p *Proc) Stop(grace time.Duration) error {
	if !p.Running() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	<-p.done
	return nil
}
