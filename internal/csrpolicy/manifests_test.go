package csrpolicy

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestTheCRDIsOneFile: the devcluster seeds the CRD deploy/base ships, byte
// for byte (the devcluster is its own module and cannot embed deploy/).
func TestTheCRDIsOneFile(t *testing.T) {
	shipped, err := os.ReadFile("../../deploy/base/csrapprovalpolicies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seeded, err := os.ReadFile("../../devcluster/internal/seed/demo/csrapprovalpolicies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shipped, seeded) {
		t.Error("devcluster/internal/seed/demo/csrapprovalpolicies.yaml differs from deploy/base/csrapprovalpolicies.yaml: copy it over")
	}
	if !bytes.Contains(shipped, []byte("name: "+CRD)) {
		t.Errorf("the CRD is not named %s", CRD)
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
