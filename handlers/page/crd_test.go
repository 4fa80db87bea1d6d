package page

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestCRDObjectKeepsWhatCountingReads holds CRDObject's few fields equal to
// the whole CRD's: the name, group, plural, kind and each version's name,
// served and storage (what kube.Editor.CountCustomResources reads), and
// nothing of the schemas.
func TestCRDObjectKeepsWhatCountingReads(t *testing.T) {
	c := &apiextensionsv1.CustomResourceDefinition{}
	c.Name = "widgets.example.com"
	c.Spec.Group = "example.com"
	c.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget", Singular: "widget"}
	c.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{
		{Name: "v1beta1", Served: false, Storage: false},
		{Name: "v1", Served: true, Storage: true, Schema: &apiextensionsv1.CustomResourceValidation{
			OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Description: "a large schema"}}},
		{Name: "v2", Served: true},
	}
	whole, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	if err != nil {
		t.Fatal(err)
	}
	got := CRDObject(c).Object
	if g, w := (&unstructured.Unstructured{Object: got}).GetName(), c.Name; g != w {
		t.Errorf("name %q, want %q", g, w)
	}
	for _, path := range [][]string{{"spec", "group"}, {"spec", "names", "plural"}, {"spec", "names", "kind"}} {
		g, _, _ := unstructured.NestedString(got, path...)
		w, _, _ := unstructured.NestedString(whole, path...)
		if g != w || g == "" {
			t.Errorf("%v: %q, want %q", path, g, w)
		}
	}
	gv, _, _ := unstructured.NestedSlice(got, "spec", "versions")
	wv, _, _ := unstructured.NestedSlice(whole, "spec", "versions")
	if len(gv) != len(wv) {
		t.Fatalf("%d versions, want %d", len(gv), len(wv))
	}
	for i := range wv {
		g, w := gv[i].(map[string]any), wv[i].(map[string]any)
		for _, k := range []string{"name", "served", "storage"} {
			// The typed object omits a false served or storage; absent reads as false.
			if gk, wk := g[k], w[k]; gk != wk && !(wk == nil && gk == false) {
				t.Errorf("version %d %s: %v, want %v", i, k, gk, wk)
			}
		}
		if _, ok := g["schema"]; ok {
			t.Errorf("version %d carries its schema", i)
		}
	}
}
