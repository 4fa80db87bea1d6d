package testcluster

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

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

// Kustomize returns what `kubectl apply -k <root>/<dir>` sends: its resources
// (files, or other kustomizations, rendered in turn) with its patches applied
// as strategic merge patches to the object of the same kind and name, as
// kustomize does. The tests of deploy/ (cmd/clusterdesk) and of the Helm
// chart's drift from it (charts/charttest) render it alike.
func Kustomize(t testing.TB, root, dir string) []*unstructured.Unstructured {
	t.Helper()
	path := filepath.Join(root, dir)
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
			objs = append(objs, Kustomize(t, root, filepath.Join(dir, r))...)
		} else {
			objs = append(objs, ReadManifests(t, p)...)
		}
	}
	for _, p := range k.Patches {
		for _, patch := range ReadManifests(t, filepath.Join(path, p.Path)) {
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
