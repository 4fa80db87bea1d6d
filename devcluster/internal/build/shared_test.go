package build

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A binary built in one checkout is found by another under the same stamp,
// never under another, and replacing the checkout's copy (as a later build
// does, by rename) leaves the shared one as it was.
func TestSharedCacheServesOnlyTheSameStamp(t *testing.T) {
	shared := t.TempDir()
	first := filepath.Join(t.TempDir(), "kube-apiserver")
	write(t, first, "built from stamp A")
	toShared(shared, "kube-apiserver", "A", first, io.Discard)

	second := filepath.Join(t.TempDir(), "kube-apiserver")
	if fromShared(shared, "kube-apiserver", "B", second, io.Discard) {
		t.Fatal("a binary of stamp A was served for stamp B")
	}
	if _, err := os.Stat(second); !os.IsNotExist(err) {
		t.Fatalf("a refused lookup left a file behind: %v", err)
	}
	if !fromShared(shared, "kube-apiserver", "A", second, io.Discard) {
		t.Fatal("the binary of stamp A was not served for stamp A")
	}
	if !fresh(second, "A") {
		t.Error("the binary taken from the shared cache has no stamp of A beside it")
	}
	if got := read(t, second); got != "built from stamp A" {
		t.Errorf("served %q", got)
	}
	// Served again over its own hard link (only the stamp was lost): no
	// temporary file is left beside it.
	if err := os.Remove(second + ".stamp"); err != nil {
		t.Fatal(err)
	}
	if !fromShared(shared, "kube-apiserver", "A", second, io.Discard) {
		t.Fatal("not served again after its stamp was lost")
	}
	if left, _ := filepath.Glob(second + ".tmp-*"); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}

	// A later build in the second checkout renames its output over the binary.
	next := second + ".next"
	write(t, next, "built from stamp C")
	if err := os.Rename(next, second); err != nil {
		t.Fatal(err)
	}
	if got := read(t, sharedPath(shared, "kube-apiserver", "A")); got != "built from stamp A" {
		t.Errorf("the shared binary changed with the checkout's: %q", got)
	}
}

func TestSharedCacheOff(t *testing.T) {
	t.Setenv(SharedCacheEnv, "off")
	if dir := DefaultSharedDir(); dir != "" {
		t.Fatalf("%s=off: shared dir %q", SharedCacheEnv, dir)
	}
	bin := filepath.Join(t.TempDir(), "kube-apiserver")
	if fromShared("", "kube-apiserver", "A", bin, io.Discard) {
		t.Fatal("served from no shared cache")
	}
	t.Setenv(SharedCacheEnv, "/somewhere")
	if dir := DefaultSharedDir(); dir != "/somewhere" {
		t.Fatalf("%s=/somewhere: shared dir %q", SharedCacheEnv, dir)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
