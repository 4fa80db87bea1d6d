package csrpolicy

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestTheCRDIsOneFile: the devcluster seeds the CRD and its guard deploy/base
// ships, byte for byte (the devcluster is its own module and cannot embed
// deploy/).
func TestTheCRDIsOneFile(t *testing.T) {
	for _, name := range []string{"csrapprovalpolicies.yaml", "csrapprovalpolicies-guard.yaml"} {
		shipped, err := os.ReadFile("../../deploy/base/" + name)
		if err != nil {
			t.Fatal(err)
		}
		seeded, err := os.ReadFile("../../devcluster/internal/seed/demo/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(shipped, seeded) {
			t.Errorf("devcluster/internal/seed/demo/%s differs from deploy/base/%[1]s: copy it over", name)
		}
		if name == "csrapprovalpolicies.yaml" && !bytes.Contains(shipped, []byte("name: "+CRD)) {
			t.Errorf("the CRD is not named %s", CRD)
		}
	}
}

// TestDemoPoliciesCompile: the devcluster's demo policies are policies.
func TestDemoPoliciesCompile(t *testing.T) {
	data, err := os.ReadFile("../../devcluster/internal/seed/demo/csrapprovalpolicies-demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		p, err := FromObject(&u)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Compile(p); err != nil {
			t.Error(err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d demo policies, want 2", n)
	}
}

// TestGuardChecksEverySigner: the guard (deploy/base/csrapprovalpolicies-guard.yaml)
// checks each signer in an expression of its own, for cost; each must be the
// same check on its own index, and the indices must reach the limit above which
// the guard asks for every signer, so no signer goes unchecked.
func TestGuardChecksEverySigner(t *testing.T) {
	data, err := os.ReadFile("../../deploy/base/csrapprovalpolicies-guard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var vap unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(strings.Split(string(data), "\n---\n")[0]), &vap.Object); err != nil {
		t.Fatal(err)
	}
	vars, _, _ := unstructured.NestedSlice(vap.Object, "spec", "variables")
	limit := -1
	for _, v := range vars {
		v := v.(map[string]any)
		if v["name"] == "tooMany" {
			_, err := fmt.Sscanf(v["expression"].(string), "size(variables.signers) > %d", &limit)
			if err != nil {
				t.Fatalf("tooMany: %v", err)
			}
		}
	}
	validations, _, _ := unstructured.NestedSlice(vap.Object, "spec", "validations")
	if limit < 1 || len(validations) != limit+1 {
		t.Fatalf("%d validations for a limit of %d signers, want one per signer and one beyond the limit", len(validations), limit)
	}
	first := validations[0].(map[string]any)
	for i, v := range validations[:limit] {
		v := v.(map[string]any)
		for _, field := range []string{"expression", "messageExpression"} {
			want := strings.ReplaceAll(strings.ReplaceAll(first[field].(string), "variables.signers[0]", fmt.Sprintf("variables.signers[%d]", i)),
				"size(variables.signers) <= 0", fmt.Sprintf("size(variables.signers) <= %d", i))
			if v[field] != want {
				t.Errorf("validation %d's %s is\n%s\nwant\n%s", i, field, v[field], want)
			}
		}
	}
	for _, want := range []string{"check('approve')", ".split('/')[0] + '/*'", "size(variables.signers) <= 0 || variables.tooMany"} {
		if !strings.Contains(first["expression"].(string), want) {
			t.Errorf("the per-signer check lacks %q", want)
		}
	}
	if last := validations[limit].(map[string]any)["expression"].(string); !strings.Contains(last, "resource('signers').check('approve')") {
		t.Errorf("beyond the limit the guard does not ask for every signer: %s", last)
	}
}
