package kube_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// crdFixture reads a real-world CRD from the shared fixtures when they are
// beside the repository, else a small one written here.
func crdFixture(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var c apiextensionsv1.CustomResourceDefinition
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "fixtures", "real", "customresourcedefinitions", "argo-workflows__full_argoproj.io_workflows.yaml"))
	if err != nil {
		raw = []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              template: {type: object, properties: {containers: {type: array, items: {type: object, properties: {name: {type: string}}}}}}
`)
	}
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// fieldsOf builds the fieldsV1 set the API server records for every field of v.
func fieldsOf(v any) map[string]any {
	out := map[string]any{}
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			out["f:"+k] = fieldsOf(c)
		}
	case []any:
		for i, c := range v {
			out["i:"+strconv.Itoa(i)] = fieldsOf(c)
		}
	}
	if len(out) > 0 {
		out["."] = map[string]any{}
	}
	return out
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}
