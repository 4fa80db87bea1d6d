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

// ldflags make /version and discovery truthful, and the user agents in the
// audit log name the real version; the defaults in both version packages are
// placeholders that release builds fill in the same way.
var ldflags = strings.Join([]string{
	"-X k8s.io/component-base/version.gitVersion=" + KubeVersion,
	"-X k8s.io/component-base/version.gitMajor=1",
	"-X k8s.io/component-base/version.gitMinor=36",
	"-X k8s.io/client-go/pkg/version.gitVersion=" + KubeVersion,
	"-X k8s.io/client-go/pkg/version.gitMajor=1",
	"-X k8s.io/client-go/pkg/version.gitMinor=36",
}, " ")

// Options says where the devcluster module is and where binaries go.
type Options struct {
	ModuleDir string    // directory holding devcluster's go.mod
	BinDir    string    // output directory for the binaries
	Out       io.Writer // progress messages
}

// Ensure builds every command in Commands whose binary is missing or stale.
// Several devclusters may share one BinDir: a lock makes them take turns, so
// the second one finds fresh binaries instead of building them again.
func Ensure(ctx context.Context, opts Options) error {
	if err := os.MkdirAll(opts.BinDir, 0o755); err != nil {
		return err
	}
	unlock, err := lock(ctx, opts.BinDir, opts.Out)
	if err != nil {
		return err
	}
	defer unlock()
	stamp, err := stampFor(opts.ModuleDir)
	if err != nil {
		return err
	}
	for _, name := range Commands {
		bin := filepath.Join(opts.BinDir, name)
		if fresh(bin, stamp) {
			fmt.Fprintf(opts.Out, "%s %s is up to date (%s)\n", name, KubeVersion, bin)
			continue
		}
		if err := buildOne(ctx, opts, name, bin); err != nil {
			return err
		}
		if err := os.WriteFile(bin+".stamp", []byte(stamp+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// stampFor identifies what a build would produce: the module requirements,
// the Go toolchain and the ldflags. Content, not modification times, so a git
// checkout that touches go.mod without changing it does not force a rebuild.
func stampFor(moduleDir string) (string, error) {
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

// buildOne runs `go build -v` for one command. -v names each package as it is
// compiled, which is the only progress signal go build gives; a cached
// package is not named, so later builds print few lines and finish fast.
func buildOne(ctx context.Context, opts Options, name, bin string) error {
	pkg := "k8s.io/kubernetes/cmd/" + name
	fmt.Fprintf(opts.Out, "building %s %s from source (first build ~5 min on 2 cores, later builds seconds)…\n", name, KubeVersion)
	start := time.Now()

	total := countDeps(ctx, opts.ModuleDir, pkg)
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
	cmd.Dir = opts.ModuleDir
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
	go reportProgress(opts.Out, &compiled, total, start, stop)

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
	fmt.Fprintf(opts.Out, "built %s in %s (packages compiled: %d, the rest came from the Go build cache)\n", bin, time.Since(start).Round(time.Second), compiled.Load())
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
