//go:build integration

package handlers

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

func lintTestCRD(group, plural, kind string, shortNames ...string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind, ShortNames: shortNames},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				SelectableFields: []apiextensionsv1.SelectableField{{JSONPath: ".spec.color"}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"color": {Type: "string"}}}}}}}},
		},
	}
}

// TestCRDPreserveUnknownFieldsIsRefusedOnCreate: what the lint's message
// says, the API server does (validatePreserveUnknownFields): a new CRD may
// not set spec.preserveUnknownFields to true, so only old CRDs carry it.
func TestCRDPreserveUnknownFieldsIsRefusedOnCreate(t *testing.T) {
	ext := clientset.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	c := lintTestCRD(uniq("lw19p")+".clusterdesk.test", "legacies", "Legacy")
	c.Spec.PreserveUnknownFields = true
	_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), c, metav1.CreateOptions{})
	if err == nil {
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), c.Name, metav1.DeleteOptions{})
		t.Fatal("the API server created a CRD with spec.preserveUnknownFields: true")
	}
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "cannot set to true") {
		t.Fatalf("want Invalid with \"cannot set to true\", got %v", err)
	}
}

// TestCRDListShowsNameConflictLints: a CRD renamed onto a short name another
// CRD of its group holds keeps its old accepted names; its list row counts
// the findings (sortable: it comes first, descending) and its page says
// which names differ and lists its selectable fields.
func TestCRDListShowsNameConflictLints(t *testing.T) {
	ext := clientset.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	group := uniq("lw19n") + ".clusterdesk.test"
	a, b := lintTestCRD(group, "alphas", "Alpha", "lwx"), lintTestCRD(group, "betas", "Beta")
	installCRD(t, a)
	installCRD(t, b)
	ctx := context.Background()
	got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, b.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Spec.Names.ShortNames = []string{"lwx"}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	var lints string
	waitFor(t, "the list to count the conflict", 30*time.Second, func() bool {
		code, doc, _ := ls.get(t, sess, "/crds?q="+group+"&sort=lints&dir=desc")
		if code != http.StatusOK {
			return false
		}
		first := doc.Find(`[data-testid="list-row"]`).First()
		idx := doc.Find(`thead th[data-column="lints"]`).Index()
		lints = strings.Join(strings.Fields(first.Children().Eq(idx).Text()), " ")
		return strings.Contains(first.Find("a[href]").First().Text(), b.Name) && strings.Contains(lints, "1 warning")
	})
	if !strings.Contains(lints, "1 danger") { // names not accepted
		t.Errorf("lint cell %q: want 1 danger (names not accepted) and 1 warning (names differ)", lints)
	}

	code, doc, _ := ls.get(t, sess, "/crds/"+b.Name)
	if code != http.StatusOK {
		t.Fatalf("GET /crds/%s: %d", b.Name, code)
	}
	if msg := doc.Find(`[data-testid="finding-accepted-names-differ"]`).Text(); !strings.Contains(msg, "shortNames [lwx] are served as []") {
		t.Errorf("names-differ finding %q", msg)
	}
	if f := doc.Find(`[data-testid="selectable-field-row"]`).Text(); !strings.Contains(f, ".spec.color") {
		t.Errorf("selectable fields %q", f)
	}
}
