package charttest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestChartRendersDeploy is the one-source-of-truth check: deploy/ is kept by
// hand (its comments are the documentation of each choice), and for each of
// its kustomizations the chart, rendered with testdata/deploy/<dir>.yaml as
// release clusterdesk in namespace clusterdesk, must give the same objects as
// `kubectl apply -k deploy/<dir>`: the same kinds and names, and each object
// equal field by field after normalize (Helm's bookkeeping labels dropped,
// lists keyed by name compared as sets, embedded YAML parsed). A change to
// one side without the other fails here.
func TestChartRendersDeploy(t *testing.T) {
	eachHelm(t, func(t *testing.T, h helmCLI) {
		dirs := overlayDirs(t)
		for _, dir := range dirs {
			t.Run(dir, func(t *testing.T) {
				values := filepath.Join("testdata", "deploy", dir+".yaml")
				if _, err := os.Stat(values); err != nil {
					t.Fatalf("deploy/%s has no chart values that render it (%v): add %s", dir, err, values)
				}
				compareObjects(t, "deploy/"+dir, testcluster.Kustomize(t, deployDir, dir),
					h.render(t, releaseName, "clusterdesk", []string{values}))
			})
		}
		// Every values file names an overlay that exists (none left behind).
		files, _ := filepath.Glob(filepath.Join("testdata", "deploy", "*.yaml"))
		for _, f := range files {
			if name := strings.TrimSuffix(filepath.Base(f), ".yaml"); !contains(dirs, name) {
				t.Errorf("%s renders deploy/%s, which has no kustomization", f, name)
			}
		}

		// deploy/approver/prometheusrule.yaml is an example applied by hand where
		// the Prometheus Operator runs; the chart renders the same rule there.
		t.Run("approver/prometheusrule.yaml", func(t *testing.T) {
			want := testcluster.ReadManifests(t, filepath.Join(deployDir, "approver", "prometheusrule.yaml"))
			got := byKind(h.render(t, releaseName, "clusterdesk", []string{filepath.Join("testdata", "deploy", "approver.yaml")},
				"--api-versions", "monitoring.coreos.com/v1"), "PrometheusRule")
			compareObjects(t, "deploy/approver/prometheusrule.yaml", want, got)
		})
	})
}

// overlayDirs lists deploy/'s directories holding a kustomization.yaml.
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
	if !contains(dirs, "base") {
		t.Fatalf("deploy/ has no base kustomization (found %v)", dirs)
	}
	return dirs
}

func contains(s []string, v string) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

// compareObjects fails for an object only one side has, and for each object
// both have with a difference after normalize, showing the difference.
func compareObjects(t *testing.T, what string, want, got []*unstructured.Unstructured) {
	t.Helper()
	key := func(o *unstructured.Unstructured) string {
		return fmt.Sprintf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
	}
	index := func(objs []*unstructured.Unstructured) map[string]any {
		m := map[string]any{}
		for _, o := range objs {
			if _, dup := m[key(o)]; dup {
				t.Errorf("%s: %s twice", what, key(o))
			}
			m[key(o)] = normalize(o.Object)
		}
		return m
	}
	w, g := index(want), index(got)
	for k, wo := range w {
		gobj, ok := g[k]
		if !ok {
			t.Errorf("%s has %s; the chart does not render it", what, k)
			continue
		}
		if d := cmp.Diff(wo, gobj); d != "" {
			t.Errorf("%s and the chart differ in %s (-%s +chart):\n%s", what, k, what, d)
		}
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			t.Errorf("the chart renders %s, which %s lacks", k, what)
		}
	}
}

// helmOnly are the keys the chart adds to every object's labels and
// selectors and deploy/ does not have: Helm's bookkeeping, the release
// (app.kubernetes.io/instance: two releases in one namespace select apart),
// and the keep policy of the ledger's claim.
var helmOnly = map[string]bool{
	"helm.sh/chart":                true,
	"app.kubernetes.io/managed-by": true,
	"app.kubernetes.io/version":    true,
	"app.kubernetes.io/instance":   true,
	"helm.sh/resource-policy":      true,
}

// normalize returns a copy of v for a semantic comparison: helmOnly keys
// dropped wherever they appear (labels, selectors, annotations), a list
// whose every element is a map with a "name" compared as a set sorted by
// name (containers, volumes, mounts, env, ports: the API merges them by
// name), and a string holding a YAML map (a ConfigMap's file) parsed.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if helmOnly[k] {
				continue
			}
			n := normalize(e)
			if m, ok := n.(map[string]any); ok && len(m) == 0 && (k == "labels" || k == "annotations") {
				continue
			}
			out[k] = n
		}
		return out
	case []any:
		out := make([]any, len(x))
		named := len(x) > 0
		for i, e := range x {
			out[i] = normalize(e)
			if m, ok := out[i].(map[string]any); !ok || m["name"] == nil {
				named = false
			}
		}
		if named {
			sort.SliceStable(out, func(i, j int) bool {
				return fmt.Sprint(out[i].(map[string]any)["name"]) < fmt.Sprint(out[j].(map[string]any)["name"])
			})
		}
		return out
	case string:
		if strings.Contains(x, "\n") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(x), &m); err == nil && len(m) > 0 {
				return normalize(m)
			}
		}
		return x
	}
	return v
}
