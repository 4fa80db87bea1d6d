package present

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/crd"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// TestCRDDetailCountedIsTheDecodedPage: the detail page built from the
// cached CRD (schemas packed) with the counts of its schemas' fields given is
// the page built from the CRD with its schemas decoded.
func TestCRDDetailCountedIsTheDecodedPage(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "fixtures", "real", "customresourcedefinitions", "argo-workflows__full_argoproj.io_workflows.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var decoded apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &decoded); err != nil {
		t.Fatal(err)
	}
	decoded.Spec.Versions = append(decoded.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: "v0", Served: true})
	packed := decoded.DeepCopy()
	kube.NewCRDSchemas().Pack(packed)
	if !kube.IsSchemaStub(packed.Spec.Versions[0].Schema.OpenAPIV3Schema) {
		t.Fatal("the schema was not packed")
	}
	fields := map[string]int{}
	for _, v := range decoded.Spec.Versions {
		if v.Schema != nil {
			fields[v.Name] = crd.Fields(v.Schema.OpenAPIV3Schema)
		}
	}
	now := time.Now()
	want := CRDDetail(&decoded, now)
	if got := CRDDetailCounted(packed, fields, now); !reflect.DeepEqual(got, want) {
		t.Errorf("from the packed CRD:\n%+v\nfrom the decoded one:\n%+v", got, want)
	}
	if got := CRDDetail(packed, now); reflect.DeepEqual(got, want) {
		t.Error("the packed CRD's page without counts is the decoded one's: the test shows nothing")
	}
}
