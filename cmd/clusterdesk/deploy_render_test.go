package main

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

const deployDir = "../../deploy"

// kustomization is the part of kustomize's Kustomization that deploy/ uses.
// It is read strictly: a field this renderer does not apply (namespace:,
// images:, ...) fails the test instead of being silently left out.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Patches    []struct {
		Path string `json:"path"`
	} `json:"patches"`
}

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

// renderOverlay returns what `kubectl apply -k deploy/<dir>` sends: its
// resources (files, or other kustomizations, rendered in turn) with its
// patches applied as strategic merge patches to the object of the same kind
// and name, as kustomize does.
func renderOverlay(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	path := filepath.Join(deployDir, dir)
	raw, err := os.ReadFile(filepath.Join(path, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(raw, &k); err != nil {
		t.Fatalf("deploy/%s/kustomization.yaml: %v", dir, err)
	}
	if k.Kind != "Kustomization" || len(k.Resources) == 0 {
		t.Fatalf("deploy/%s/kustomization.yaml: kind %q, resources %v", dir, k.Kind, k.Resources)
	}
	var objs []*unstructured.Unstructured
	for _, r := range k.Resources {
		p := filepath.Join(path, r)
		st, err := os.Stat(p)
		if err != nil {
			t.Fatalf("deploy/%s/kustomization.yaml lists %s: %v", dir, r, err)
		}
		if st.IsDir() {
			objs = append(objs, renderOverlay(t, filepath.Join(dir, r))...)
		} else {
			objs = append(objs, testcluster.ReadManifests(t, p)...)
		}
	}
	for _, p := range k.Patches {
		for _, patch := range testcluster.ReadManifests(t, filepath.Join(path, p.Path)) {
			i := slices.IndexFunc(objs, func(o *unstructured.Unstructured) bool {
				return o.GetKind() == patch.GetKind() && o.GetName() == patch.GetName() && o.GetNamespace() == patch.GetNamespace()
			})
			if i < 0 {
				t.Fatalf("deploy/%s/%s patches %s %s, which its resources lack", dir, p.Path, patch.GetKind(), patch.GetName())
			}
			typed, err := scheme.Scheme.New(schema.FromAPIVersionAndKind(patch.GetAPIVersion(), patch.GetKind()))
			if err != nil {
				t.Fatalf("deploy/%s/%s: %v", dir, p.Path, err)
			}
			orig, err := objs[i].MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			pj, err := patch.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			merged, err := strategicpatch.StrategicMergePatch(orig, pj, typed)
			if err != nil {
				t.Fatalf("deploy/%s/%s: %v", dir, p.Path, err)
			}
			out := &unstructured.Unstructured{}
			if err := out.UnmarshalJSON(merged); err != nil {
				t.Fatal(err)
			}
			objs[i] = out
		}
	}
	return objs
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
