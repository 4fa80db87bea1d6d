package testfixtures

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"sigs.k8s.io/yaml"
)

// DefaultAPF is the FlowSchemas and priority levels a v1.36.3 apiserver
// creates, as read from a real one (internal/apf/testdata): 11 and 8, or the
// test fails.
func DefaultAPF(t testing.TB) ([]*flowcontrolv1.FlowSchema, []*flowcontrolv1.PriorityLevelConfiguration) {
	t.Helper()
	dir := filepath.Join(moduleRoot(t), "internal", "apf", "testdata")
	var fsl flowcontrolv1.FlowSchemaList
	var pll flowcontrolv1.PriorityLevelConfigurationList
	for file, into := range map[string]any{
		"default-flowschemas.yaml":    &fsl,
		"default-prioritylevels.yaml": &pll,
	} {
		path := filepath.Join(dir, file)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(raw, into); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	var fss []*flowcontrolv1.FlowSchema
	for i := range fsl.Items {
		fss = append(fss, &fsl.Items[i])
	}
	var pls []*flowcontrolv1.PriorityLevelConfiguration
	for i := range pll.Items {
		pls = append(pls, &pll.Items[i])
	}
	if len(fss) != 11 || len(pls) != 8 {
		t.Fatalf("testdata holds %d FlowSchemas and %d priority levels, want 11 and 8", len(fss), len(pls))
	}
	return fss, pls
}

// moduleRoot is the repository's root module directory, found from the test's
// working directory (its package's directory): not from runtime.Caller, whose
// file names are module paths, not directories, in the -trimpath builds
// scripts/go-test-unit.sh makes.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(mod), "module github.com/clusterdesk/clusterdesk\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testfixtures: no go.mod of github.com/clusterdesk/clusterdesk above the working directory")
		}
		dir = parent
	}
}
