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
	if err := fs.Parse(args); err != nil {
		return err
	}
	abs, err := filepath.Abs(*binDir)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return build.Ensure(ctx, build.Options{ModuleDir: moduleDir, BinDir: abs, Out: os.Stdout})
}
