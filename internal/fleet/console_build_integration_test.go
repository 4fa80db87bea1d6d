//go:build integration

package fleet_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// built is the console binary this package's tests run, built once per `go
// test` run: each of the four tests used to build (and link) its own, 10-20 s
// each on CI's 2 cores, of the same tree.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// buildConsole builds bin/clusterdesk from this tree, so the tests never run a
// stale binary; the first test builds it, the others reuse it.
func buildConsole(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "fleet-clusterdesk-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "clusterdesk")
		cmd := exec.Command("go", "build", "-o", built.path, "./cmd/clusterdesk")
		cmd.Dir = "../.."
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build ./cmd/clusterdesk: %v\n%s", built.err, built.out)
	}
	return built.path
}

// TestMain removes the console binary once every test has run.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
