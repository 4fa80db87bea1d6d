package build

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// SharedCacheEnv names the directory where built binaries are kept across
// checkouts; unset, it is the user's cache directory (DefaultSharedDir).
// Set it to "off" to build in every checkout.
const SharedCacheEnv = "DEVCLUSTER_BIN_CACHE"

// DefaultSharedDir is where binaries built from the same sources are kept for
// every checkout of the repository: $DEVCLUSTER_BIN_CACHE, else
// $XDG_CACHE_HOME/clusterdesk-devcluster (~/.cache/...), "" when off.
//
// Why: --bin-dir is the checkout's .cache/bin, so a fresh clone (CI's) linked
// kube-apiserver, kube-controller-manager and v1.28's kube-apiserver again
// although the Go build cache held every compiled package: 16 + 13 + 17 s of
// linking (stop 59's CI) for binaries identical to the ones the last clone
// built. A binary
// is found here only under its stamp (go.mod, go.sum, toolchain, ldflags; the
// provider's sources), so a change to any of them builds anew.
func DefaultSharedDir() string {
	if dir := os.Getenv(SharedCacheEnv); dir != "" {
		if dir == "off" {
			return ""
		}
		return dir
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "clusterdesk-devcluster")
}

// sharedPath is a binary's place in the shared cache: its name and stamp.
func sharedPath(sharedDir, name, stamp string) string {
	return filepath.Join(sharedDir, name+"-"+stamp)
}

// fromShared puts the shared cache's binary of this name and stamp at bin,
// with its stamp file, and reports whether there was one. Any failure only
// means building instead.
func fromShared(sharedDir, name, stamp, bin string, out io.Writer) bool {
	if sharedDir == "" {
		return false
	}
	src := sharedPath(sharedDir, name, stamp)
	if _, err := os.Stat(src); err != nil {
		return false
	}
	if err := place(src, bin); err != nil {
		fmt.Fprintf(out, "could not take %s from %s (%v): building it\n", name, sharedDir, err)
		return false
	}
	if err := os.WriteFile(bin+".stamp", []byte(stamp+"\n"), 0o644); err != nil {
		return false
	}
	fmt.Fprintf(out, "%s taken from the shared cache %s (built from the same sources)\n", name, src)
	return true
}

// toShared keeps a freshly built binary in the shared cache. A failure is
// said and otherwise ignored: the build itself succeeded.
func toShared(sharedDir, name, stamp, bin string, out io.Writer) {
	if sharedDir == "" {
		return
	}
	if err := os.MkdirAll(sharedDir, 0o755); err != nil {
		fmt.Fprintf(out, "not kept in the shared cache: %v\n", err)
		return
	}
	if err := place(bin, sharedPath(sharedDir, name, stamp)); err != nil {
		fmt.Fprintf(out, "not kept in the shared cache: %v\n", err)
	}
}

// place makes dst a copy of src: a hard link when both are on one file
// system, else a copy. Either way it appears whole (written beside dst, then
// renamed), so a running binary is never overwritten in place and a reader
// never sees half a file. Nothing later writes into a binary in place (builds
// rename over it), so sharing the inode is safe.
func place(src, dst string) error {
	tmp := fmt.Sprintf("%s.tmp-%d", dst, os.Getpid())
	os.Remove(tmp)
	if err := os.Link(src, tmp); err != nil {
		if err := copyFile(src, tmp); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	err := os.Rename(tmp, dst)
	// rename(2) leaves both names when they are links to one file already
	// (dst was taken from the cache before, only its stamp was missing).
	os.Remove(tmp)
	return err
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
