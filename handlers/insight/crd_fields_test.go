package insight

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestSchemaFieldsFollowTheCRDsVersion: counts are kept per resourceVersion
// and UID, so a changed or recreated CRD is counted again.
func TestSchemaFieldsFollowTheCRDsVersion(t *testing.T) {
	c := &apiextensionsv1.CustomResourceDefinition{}
	c.Name, c.UID, c.ResourceVersion = "widgets.example.com", "u1", "1"
	c.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{
		{Name: "v1", Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}}}}}},
		{Name: "v0"},
	}
	var s schemaFields
	if _, ok := s.get(c); ok {
		t.Fatal("counted before put")
	}
	s.put(c)
	got, ok := s.get(c)
	if _, has := got["v0"]; !ok || got["v1"] != 2 || has || len(got) != 1 {
		t.Fatalf("counts %v, %v", got, ok)
	}
	changed := c.DeepCopy()
	changed.ResourceVersion = "2"
	if _, ok := s.get(changed); ok {
		t.Error("a new resourceVersion has the old counts")
	}
	again := c.DeepCopy()
	again.UID = "u2"
	if _, ok := s.get(again); ok {
		t.Error("a recreated CRD has the old one's counts")
	}
}
