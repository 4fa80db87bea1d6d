package main

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

const deployDir = "../../deploy"

// overlayDirs lists every directory of deploy/ holding a kustomization.yaml:
// base and each variant, so that a new overlay is tested without being named here.
func overlayDirs(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(deployDir)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(deployDir, e.Name(), "kustomization.yaml")); e.IsDir() && err == nil {
			dirs = append(dirs, e.Name())
		}
	}
	sort.Strings(dirs)
	if !slices.Contains(dirs, "base") {
		t.Fatalf("deploy/ has no base kustomization (found %v)", dirs)
	}
	return dirs
}

// renderOverlay returns what `kubectl apply -k deploy/<dir>` sends
// (testcluster.Kustomize).
func renderOverlay(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	return testcluster.Kustomize(t, deployDir, dir)
}

// deployObjects returns the base manifests and the proxy-mode variant as
// `kubectl apply -k` sends them.
func deployObjects(t *testing.T) (base, proxy []*unstructured.Unstructured) {
	t.Helper()
	return renderOverlay(t, "base"), renderOverlay(t, "proxy")
}

func find(t testing.TB, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("deploy/ has no %s %s", kind, name)
	return nil
}
