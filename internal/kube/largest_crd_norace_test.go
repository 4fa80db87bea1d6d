//go:build !race

package kube_test

import (
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/managedfields"
)

// Tests over the largest real-world CRD (2.9 MB of YAML) that run on one
// goroutine: built without -race (scripts/go-test-unit.sh runs them in its
// pass without the race detector, which finds nothing here and made them the
// slowest of the race pass: 52 s and 20 s of stop 58's CI).

func TestCRDSchemasPack(t *testing.T) {
	s := kube.NewCRDSchemas()
	fixture := largestCRDJSON(t)[0] // the largest
	c := estateCRD(t, fixture, 0)
	c.Spec.Versions = append(c.Spec.Versions, *c.Spec.Versions[0].DeepCopy(), apiextensionsv1.CustomResourceDefinitionVersion{Name: "v0"})
	c.Spec.Versions[1].Name = "v2"
	want := c.DeepCopy()
	s.Pack(c)
	stub := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Description
	if !strings.HasPrefix(stub, kube.SchemaStubPrefix) || !strings.Contains(stub, "bytes of JSON, sha256 ") {
		t.Errorf("stub says %q", stub)
	}
	if c.Spec.Versions[1].Schema.OpenAPIV3Schema.Description != stub || c.Spec.Versions[2].Schema != nil {
		t.Errorf("same schema, same stub; no schema stays none: %+v", c.Spec.Versions[1:])
	}

	// Idempotent: a second pass changes nothing and keeps the pack.
	again := c.DeepCopy()
	s.Pack(c)
	if !equality.Semantic.DeepEqual(again, c) {
		t.Error("a second Pack changed the object")
	}
	if got, err := s.Unpack(c); err != nil || !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("unpack after a second Pack: %v", err)
	}

	// A copy of the cached object has stubs but no pack: an error, not stubs shown as schemas.
	if _, err := s.Unpack(c.DeepCopy()); err == nil {
		t.Error("unpacking a copy succeeded")
	}

	// A changed schema changes the cached object (the activity pages diff the stubs).
	changed := estateCRD(t, fixture, 0)
	changed.Spec.Versions[0].Schema.OpenAPIV3Schema.Description += " (edited)"
	s.Pack(changed)
	if changed.Spec.Versions[0].Schema.OpenAPIV3Schema.Description == stub {
		t.Error("a changed schema leaves the same stub")
	}

	// Not a CRD, or a CRD without schemas: nothing packed, nothing to unpack.
	bare := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1"}}}}
	n := s.Len()
	s.Pack(bare)
	if got, err := s.Unpack(bare); err != nil || s.Len() != n || !equality.Semantic.DeepEqual(got, bare) {
		t.Errorf("a CRD without schemas: %v, %d packs (was %d)", err, s.Len(), n)
	}
	runtime.KeepAlive(c)
	runtime.KeepAlive(changed)
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
