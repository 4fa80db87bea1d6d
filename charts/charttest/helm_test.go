package charttest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

const (
	chartDir  = "../clusterdesk"
	deployDir = "../../deploy"
	// The release the drift test renders deploy/ as: its names are deploy/'s.
	releaseName = "clusterdesk"
)

// helmBinary is the helm CLI built by `make helm` (Makefile, HELM_VERSION).
func helmBinary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("HELM")
	if bin == "" {
		abs, err := filepath.Abs("../../.cache/bin/helm")
		if err != nil {
			t.Fatal(err)
		}
		bin = abs
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no helm CLI at %s (%v): run `make helm`, which builds it from its Go module", bin, err)
	}
	return bin
}

// helm runs the helm CLI with its own empty config, cache and data
// directories (nothing of the user's, no repository index) and returns its
// stdout, stderr and error.
func helm(t testing.TB, args ...string) (string, string, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(helmBinary(t), args...)
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// render runs helm template on the chart as release name in namespace ns
// with the values files and extra flags, and parses what it prints.
func render(t testing.TB, name, ns string, valuesFiles []string, extra ...string) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"template", name, chartDir, "--namespace", ns, "--include-crds"}
	for _, f := range valuesFiles {
		args = append(args, "--values", f)
	}
	args = append(args, extra...)
	out, stderr, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	path := filepath.Join(t.TempDir(), "rendered.yaml")
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	return testcluster.ReadManifests(t, path)
}

// exampleValues lists charts/clusterdesk/examples/*.yaml: every documented
// values file, so that a new one is tested without being named here.
func exampleValues(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	for _, want := range []string{"token", "oidc", "oauth2-proxy", "replicas-on-postgres", "approver-on"} {
		if !containsBase(files, want+".yaml") {
			t.Errorf("charts/clusterdesk/examples has no %s.yaml (found %v)", want, files)
		}
	}
	return files
}

func containsBase(files []string, base string) bool {
	for _, f := range files {
		if filepath.Base(f) == base {
			return true
		}
	}
	return false
}

func exampleName(file string) string {
	return strings.TrimSuffix(filepath.Base(file), ".yaml")
}

// byKind returns the rendered objects of a kind.
func byKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

func find(t testing.TB, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("the chart renders no %s %s", kind, name)
	return nil
}

func yamlUnmarshal(raw []byte, v any) error { return yaml.Unmarshal(raw, v) }
