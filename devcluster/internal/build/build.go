// Package build compiles kube-apiserver and kube-controller-manager from the
// k8s.io/kubernetes version pinned in the devcluster module, skipping the work
// when the binaries on disk were built from the same go.mod and go.sum.
package build

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
)

// KubeVersion is the Kubernetes release devcluster's go.mod pins. It is
// stamped into the binaries so discovery reports it instead of v0.0.0-master.
const KubeVersion = "v1.36.3"

// Commands are the binaries devcluster runs, in build order.
var Commands = []string{"kube-apiserver", "kube-controller-manager"}

const progressEvery = 10 * time.Second

// Options says where the devcluster module is and where binaries go.
type Options struct {
	ModuleDir string    // directory holding devcluster's go.mod
	BinDir    string    // output directory for the binaries (a release's BinSubdir goes below it)
	Out       io.Writer // progress messages
	// Release is what to build; the zero value means Default.
	Release Release
	// SharedDir keeps built binaries for other checkouts, keyed by stamp
	// (DefaultSharedDir); "" builds in BinDir only.
	SharedDir string
}

func (o Options) release() Release {
	if o.Release.Version == "" {
		return Default
	}
	return o.Release
}

// Ensure builds every command of the release whose binary is missing or stale.
// Several devclusters may share one BinDir: a lock makes them take turns, so
// the second one finds fresh binaries instead of building them again.
func Ensure(ctx context.Context, opts Options) error {
	rel := opts.release()
	binDir := rel.BinDir(opts.BinDir)
	moduleDir := filepath.Join(opts.ModuleDir, rel.Module)
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	unlock, err := lock(ctx, binDir, opts.Out)
	if err != nil {
		return err
	}
	defer unlock()
	stamp, err := stampFor(moduleDir, rel.ldflags())
	if err != nil {
		return err
	}
	for _, name := range rel.Commands {
		bin := filepath.Join(binDir, name)
		if fresh(bin, stamp) {
			fmt.Fprintf(opts.Out, "%s %s is up to date (%s)\n", name, rel.Version, bin)
			continue
		}
		if fromShared(opts.SharedDir, name, stamp, bin, opts.Out) {
			continue
		}
		fmt.Fprintf(opts.Out, "building %s %s from source (first build ~5 min on 2 cores, later builds seconds)…\n", name, rel.Version)
		if err := goBuild(ctx, opts.Out, moduleDir, "k8s.io/kubernetes/cmd/"+name, rel.ldflags(), bin); err != nil {
			return err
		}
		if err := os.WriteFile(bin+".stamp", []byte(stamp+"\n"), 0o644); err != nil {
			return err
		}
		toShared(opts.SharedDir, name, stamp, bin, opts.Out)
	}
	return nil
}

// stampFor identifies what a build would produce: the module requirements,
// the Go toolchain and the ldflags. Content, not modification times, so a git
// checkout that touches go.mod without changing it does not force a rebuild.
func stampFor(moduleDir, ldflags string) (string, error) {
	h := sha256.New()
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(moduleDir, name))
		if err != nil {
			return "", err
		}
		h.Write(data)
	}
	fmt.Fprintf(h, "%s\n%s\n", runtime.Version(), ldflags)
	return hex.EncodeToString(h.Sum(nil)), nil
}

func fresh(bin, stamp string) bool {
	if _, err := os.Stat(bin); err != nil {
		return false
	}
	got, err := os.ReadFile(bin + ".stamp")
	return err == nil && strings.TrimSpace(string(got)) == stamp
}

// goBuild runs `go build -v` for one command. -v names each package as it is
// compiled, which is the only progress signal go build gives; a cached
// package is not named, so later builds print few lines and finish fast.
func goBuild(ctx context.Context, out io.Writer, moduleDir, pkg, ldflags, bin string) error {
	start := time.Now()

	total := countDeps(ctx, moduleDir, pkg)
	logPath := bin + ".build.log"
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()

	// Build beside the target and rename, so a running cluster's binary
	// is never overwritten in place.
	tmp := fmt.Sprintf("%s.tmp-%d", bin, os.Getpid())
	defer os.Remove(tmp)
	cmd := exec.CommandContext(ctx, "go", "build", "-v", "-o", tmp, "-ldflags", ldflags, pkg)
	cmd.Dir = moduleDir
	cmd.Stdout = log
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("go build %s: %w", pkg, err)
	}

	var compiled atomic.Int64
	stop := make(chan struct{})
	defer close(stop)
	go reportProgress(out, &compiled, total, start, stop)

	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		line := lines.Text()
		fmt.Fprintln(log, line)
		if isPackageLine(line) {
			compiled.Add(1)
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("go build %s failed (%w); full output in %s", pkg, err, logPath)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return err
	}
	fmt.Fprintf(out, "built %s in %s (packages compiled: %d, the rest came from the Go build cache)\n", bin, time.Since(start).Round(time.Second), compiled.Load())
	return nil
}

// isPackageLine tells compiled package paths from the go command's own
// messages ("go: downloading …") and compiler errors ("# pkg", "file.go:1: …").
func isPackageLine(line string) bool {
	return line != "" && !strings.HasPrefix(line, "go: ") && !strings.HasPrefix(line, "#") && !strings.ContainsAny(line, " \t:")
}

// countDeps returns how many packages pkg depends on, as the upper bound of
// the progress count, or 0 if go list fails (progress then shows no bound).
func countDeps(ctx context.Context, moduleDir, pkg string) int {
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", pkg)
	cmd.Dir = moduleDir
	out, err := cmd.Output()
	if err != nil {
		return 0
	}
	return strings.Count(string(out), "\n")
}

func reportProgress(out io.Writer, compiled *atomic.Int64, total int, start time.Time, stop <-chan struct{}) {
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			elapsed := time.Since(start).Round(time.Second)
			if total > 0 {
				fmt.Fprintf(out, "  … %d packages compiled so far (at most %d; cached ones are skipped), %s elapsed\n", compiled.Load(), total, elapsed)
			} else {
				fmt.Fprintf(out, "  … %d packages compiled so far, %s elapsed\n", compiled.Load(), elapsed)
			}
		}
	}
}
