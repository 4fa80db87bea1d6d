package etcd

import (
	"net"
	"path/filepath"
	"testing"
)

// devcluster picks new ports on every run; etcd must accept its old data
// directory under new URLs.
func TestRestartsOnNewPorts(t *testing.T) {
	dir := t.TempDir()
	for run := range 2 {
		s, err := Start(filepath.Join(dir, "data"), filepath.Join(dir, "etcd.log"), freePort(t), freePort(t))
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		s.Close()
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
