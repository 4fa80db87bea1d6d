package crd

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func findingCodes(c *apiextensionsv1.CustomResourceDefinition) map[string]string {
	out := map[string]string{}
	for _, f := range Lint(c, now) {
		out[f.Code] = f.Message
	}
	return out
}

func TestPreserveUnknownFieldsIsAWarning(t *testing.T) {
	c := loadCRD(t, widgets)
	if _, ok := findingCodes(c)[CodePreserveUnknownFields]; ok {
		t.Fatal("flagged with preserveUnknownFields false")
	}
	c.Spec.PreserveUnknownFields = true
	for _, f := range Lint(c, now) {
		if f.Code == CodePreserveUnknownFields {
			if f.Severity.String() != "warning" {
				t.Errorf("severity %v, want warning", f.Severity)
			}
			return
		}
	}
	t.Fatal("preserveUnknownFields: true not flagged")
}

func TestAcceptedNamesDiffering(t *testing.T) {
	c := loadCRD(t, widgets)
	if _, ok := findingCodes(c)[CodeNamesDiffer]; ok {
		t.Fatal("flagged before the naming controller set acceptedNames")
	}
	c.Status.AcceptedNames = *c.Spec.Names.DeepCopy()
	c.Status.AcceptedNames.ShortNames = []string{"wd"}
	if _, ok := findingCodes(c)[CodeNamesDiffer]; ok {
		t.Fatal("flagged with equal names")
	}
	// A conflict on update: the controller keeps serving the old names.
	c.Spec.Names.Plural, c.Spec.Names.ShortNames = "gadgets", []string{"gd", "wd"}
	msg, ok := findingCodes(c)[CodeNamesDiffer]
	if !ok {
		t.Fatal("differing accepted names not flagged")
	}
	for _, want := range []string{"plural “gadgets” is served as “widgets”", "shortNames [gd, wd] are served as [wd]"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "kind") {
		t.Errorf("message %q names a field that is the same", msg)
	}
}
