package kube_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/managedfields"
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

func TestStripForCache(t *testing.T) {
	c := crdFixture(t)
	whole, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var asMap map[string]any
	if err := json.Unmarshal(whole, &asMap); err != nil {
		t.Fatal(err)
	}
	full, err := json.Marshal(fieldsOf(asMap))
	if err != nil {
		t.Fatal(err)
	}
	c.Annotations = map[string]string{kube.LastAppliedAnnotation: string(whole), "team": "a"}
	c.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: full}},
		{Manager: "kube-apiserver", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:acceptedNames":{"f:kind":{}}}}`)}},
	}
	before := managedfields.FieldPaths(full)
	spec := c.Spec.DeepCopy()

	out, err := kube.StripForCache(c)
	if err != nil || out != any(c) {
		t.Fatalf("StripForCache = %v, %v", out, err)
	}
	got := c.Annotations[kube.LastAppliedAnnotation]
	if !strings.HasPrefix(got, kube.StrippedPrefix) || len(got) > 200 || c.Annotations["team"] != "a" {
		t.Errorf("last-applied annotation kept as %.200q, others %v", got, c.Annotations)
	}
	if !strings.Contains(got, "bytes") {
		t.Errorf("the placeholder says the size: %q", got)
	}
	if trimmed := c.ManagedFields[0].FieldsV1.Raw; len(trimmed) >= len(full) {
		t.Errorf("managedFields not trimmed: %d of %d bytes", len(trimmed), len(full))
	}
	if after := managedfields.FieldPaths(c.ManagedFields[0].FieldsV1.Raw); !slices.Equal(after, before) {
		t.Errorf("the history's field paths changed:\n%v\n%v", after, before)
	}
	if string(c.ManagedFields[1].FieldsV1.Raw) != `{"f:status":{"f:acceptedNames":{"f:kind":{}}}}` || c.ManagedFields[0].Manager != "kubectl" {
		t.Errorf("shallow entries and managers stay: %+v", c.ManagedFields[1])
	}
	if !equalJSON(t, spec, &c.Spec) {
		t.Error("the spec (schemas) is kept whole")
	}

	// Idempotent: a second pass changes nothing.
	again := c.DeepCopy()
	if _, err := kube.StripForCache(again); err != nil || !equalJSON(t, again, c) {
		t.Error("a second pass changes the object")
	}
	// Not an object: left alone.
	tomb := cache.DeletedFinalStateUnknown{Key: "x", Obj: c}
	if out, err := kube.StripForCache(tomb); err != nil || out != any(tomb) {
		t.Errorf("tombstone: %v %v", out, err)
	}
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
