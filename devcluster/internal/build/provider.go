package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

const (
	// ProviderModule is the OpenID provider's module directory under
	// devcluster's go.mod. It is a module of its own so that its
	// dependencies (zitadel/oidc and newer golang.org/x, otel, go-jose) never
	// raise the versions kube-apiserver is built with from devcluster's go.mod.
	ProviderModule = "oidc"
	// ProviderCommand is the provider binary's name under --bin-dir.
	ProviderCommand = "devcluster-oidc"
)

// EnsureProvider builds the OpenID provider into BinDir unless the binary
// there was built from the same sources and toolchain, and returns its path.
// It takes the same lock as Ensure.
func EnsureProvider(ctx context.Context, opts Options) (string, error) {
	if err := os.MkdirAll(opts.BinDir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lock(ctx, opts.BinDir, opts.Out)
	if err != nil {
		return "", err
	}
	defer unlock()
	moduleDir := filepath.Join(opts.ModuleDir, ProviderModule)
	stamp, err := sourceStamp(moduleDir)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(opts.BinDir, ProviderCommand)
	if fresh(bin, stamp) || fromShared(opts.SharedDir, ProviderCommand, stamp, bin, opts.Out) {
		return bin, nil
	}
	fmt.Fprintf(opts.Out, "building %s from %s (seconds)…\n", ProviderCommand, moduleDir)
	if err := goBuild(ctx, opts.Out, moduleDir, ".", "", bin); err != nil {
		return "", err
	}
	if err := os.WriteFile(bin+".stamp", []byte(stamp+"\n"), 0o644); err != nil {
		return "", err
	}
	toShared(opts.SharedDir, ProviderCommand, stamp, bin, opts.Out)
	return bin, nil
}

// sourceStamp hashes what the provider binary is built from: unlike the
// Kubernetes commands, whose sources are fixed by go.sum, its sources live in
// this repository and change with it. Tests are left out; they are not built in.
func sourceStamp(moduleDir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(moduleDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(moduleDir, path)
		fmt.Fprintf(h, "%s %d\n", rel, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%s\n", runtime.Version())
	return hex.EncodeToString(h.Sum(nil)), nil
}
