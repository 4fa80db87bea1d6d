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

// helmCLI is one helm binary the chart is tested with: helm v4 (`make
// helm`, HELM_VERSION) and helm v3 (`make helm3`, HELM3_VERSION), the two
// major releases people install it with.
type helmCLI struct {
	Name string // helm4, helm3: the subtests' names
	bin  string
}

// helmCLIs are both, in that order; each is $HELM or $HELM3 when set.
func helmCLIs(t testing.TB) []helmCLI {
	t.Helper()
	return []helmCLI{helmAt(t, "helm4", "HELM", "helm", "make helm"), helmAt(t, "helm3", "HELM3", "helm3", "make helm3")}
}

func helmAt(t testing.TB, name, env, file, target string) helmCLI {
	t.Helper()
	bin := os.Getenv(env)
	if bin == "" {
		abs, err := filepath.Abs("../../.cache/bin/" + file)
		if err != nil {
			t.Fatal(err)
		}
		bin = abs
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no %s CLI at %s (%v): run `%s`, which builds it from its Go module", name, bin, err, target)
	}
	return helmCLI{Name: name, bin: bin}
}

// eachHelm runs f as a subtest with each helm CLI: the same assertions hold
// for both.
func eachHelm(t *testing.T, f func(t *testing.T, h helmCLI)) {
	for _, h := range helmCLIs(t) {
		t.Run(h.Name, func(t *testing.T) { f(t, h) })
	}
}

// render is helm v4's render (what the integration tests and the drift
// check render with); helm3's are the lint and render tests through eachHelm.
func render(t testing.TB, name, ns string, valuesFiles []string, extra ...string) []*unstructured.Unstructured {
	t.Helper()
	return helmCLIs(t)[0].render(t, name, ns, valuesFiles, extra...)
}

// run runs the CLI with its own empty config, cache and data directories
// (nothing of the user's, no repository index) and returns its stdout,
// stderr and error.
func (h helmCLI) run(t testing.TB, args ...string) (string, string, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(h.bin, args...)
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
func (h helmCLI) render(t testing.TB, name, ns string, valuesFiles []string, extra ...string) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"template", name, chartDir, "--namespace", ns, "--include-crds"}
	for _, f := range valuesFiles {
		args = append(args, "--values", f)
	}
	args = append(args, extra...)
	out, stderr, err := h.run(t, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", h.Name, strings.Join(args, " "), err, stderr)
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
