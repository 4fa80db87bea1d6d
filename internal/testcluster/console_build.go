package testcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// ConsoleBin returns the path of bin/clusterdesk built from this tree, as
// `make build` builds it (`go build -trimpath -o bin/clusterdesk
// ./cmd/clusterdesk`, the same flags: the Makefile's GO_BUILD_FLAGS): the
// tests that run the real binary never run a stale one, and yet it is linked
// once, not once per test package. Under make test, which builds it first,
// every call finds it up to date and the go command links nothing (about 1 s
// instead of 10–20 s of link CPU on CI's 2 cores, for each of the six
// packages that used to build their own copy).
//
// Builds are serialised by a lock file beside the binary: make test's two
// integration lanes and the browser tests run at the same time, and a
// second go build must not replace the file while the first one writes it.
func ConsoleBin(tb testing.TB) string {
	tb.Helper()
	// Once per test binary: the tree does not change while its tests run,
	// and charttest alone asks once per pod it starts.
	consoleBuild.once.Do(func() { consoleBuild.path, consoleBuild.err = buildConsoleBin() })
	if consoleBuild.err != nil {
		tb.Fatal(consoleBuild.err)
	}
	return consoleBuild.path
}

var consoleBuild struct {
	once sync.Once
	path string
	err  error
}

func buildConsoleBin() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, "bin", "clusterdesk")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(root, "bin", ".clusterdesk.build.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", err
	}
	defer lock.Close() // closing releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock the console build: %w", err)
	}
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/clusterdesk")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/clusterdesk: %w\n%s", err, out)
	}
	return bin, nil
}

// moduleRoot is the directory of the repository's go.mod, found from the
// test's working directory (its package's directory) upwards.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "cmd", "clusterdesk")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
