package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/clusterdesk/clusterdesk/devcluster/internal/build"
)

func runBuild(args []string) error {
	moduleDir, err := findModuleDir()
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("devcluster build", flag.ContinueOnError)
	binDir := fs.String("bin-dir", defaultBinDir(moduleDir), "directory for the kube-apiserver and kube-controller-manager binaries")
	version := fs.String("version", "1.36", "Kubernetes release to build: 1.36, or 1.28 (kube-apiserver only, into BIN-DIR/v1.28)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rel, err := build.LookupRelease(*version)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(*binDir)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := build.Options{ModuleDir: moduleDir, BinDir: abs, Out: os.Stdout, Release: rel, SharedDir: build.DefaultSharedDir()}
	if err := build.Ensure(ctx, opts); err != nil {
		return err
	}
	if !rel.AuthenticationConfig {
		return nil
	}
	_, err = build.EnsureProvider(ctx, opts)
	return err
}
