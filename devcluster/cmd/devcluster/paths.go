package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

const modulePath = "github.com/clusterdesk/clusterdesk/devcluster"

// findModuleDir returns the directory of devcluster's go.mod, which `go build`
// of the control plane must run in. It looks in the working directory, its
// parents, and a devcluster/ child of each, so both `cd devcluster && go run
// ./cmd/devcluster` and a run from the repository root work.
func findModuleDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		for _, candidate := range []string{dir, filepath.Join(dir, "devcluster")} {
			if isDevclusterModule(candidate) {
				return candidate, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the devcluster module (go.mod of " + modulePath + "); run devcluster inside the clusterdesk repository")
		}
		dir = parent
	}
}

func isDevclusterModule(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	lines := bufio.NewScanner(bytes.NewReader(data))
	for lines.Scan() {
		if fields := strings.Fields(lines.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == modulePath
		}
	}
	return false
}

// defaultDir is <repository>/.cache/devcluster, which the repository ignores.
func defaultDir(moduleDir string) string {
	return filepath.Join(filepath.Dir(moduleDir), ".cache", "devcluster")
}

// defaultBinDir is outside the default cluster directory, so resetting the
// cluster (rm -rf .cache/devcluster) does not cost a rebuild.
func defaultBinDir(moduleDir string) string {
	return filepath.Join(filepath.Dir(moduleDir), ".cache", "devcluster-bin")
}
