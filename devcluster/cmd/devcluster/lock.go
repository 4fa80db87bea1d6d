package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockDir takes an exclusive lock on dir, so a second "devcluster up" on the
// same directory fails at once instead of fighting over etcd's data and
// ready.json. The kernel drops the lock when the process dies, however it dies.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "devcluster.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		owner, _ := os.ReadFile(path)
		f.Close()
		return nil, fmt.Errorf("%s is in use by another devcluster (pid %s)", dir, strings.TrimSpace(string(owner)))
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
