package page

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// A CRD's custom resources are counted, the same way, on the CRD's detail
// page (handlers/insight) and above the table of its objects (handlers/editor).

// CRCountText is how many custom resources a CRD has, as the pages say it.
func CRCountText(n kube.CRCount) string {
	s := strconv.FormatInt(n.Count, 10)
	if n.AtLeast {
		s = "at least " + s
	}
	return s
}

// CRDObject is crd as the unstructured object the Editor counts with: only
// the fields counting reads (kube.Editor.CountCustomResources: the name,
// spec.group, spec.names' plural and kind, and each version's name, served
// and storage). Converting the whole CRD, with the schemas the detail page
// decoded, made megabytes of generic maps per view that nothing read.
func CRDObject(crd *apiextensionsv1.CustomResourceDefinition) *unstructured.Unstructured {
	versions := make([]any, 0, len(crd.Spec.Versions))
	for _, v := range crd.Spec.Versions {
		versions = append(versions, map[string]any{"name": v.Name, "served": v.Served, "storage": v.Storage})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiextensionsv1.SchemeGroupVersion.String(),
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": crd.Name},
		"spec": map[string]any{
			"group":    crd.Spec.Group,
			"names":    map[string]any{"plural": crd.Spec.Names.Plural, "kind": crd.Spec.Names.Kind},
			"versions": versions,
		},
	}}
}

// A CRD's custom resources are addressed the same way by the editor
// (handlers/editor) and the cleanup (handlers/cleanup).

// CRKind is the kind of crd's custom resources in namespace ns, or a 409
// when the CRD serves no version.
func CRKind(crd *apiextensionsv1.CustomResourceDefinition, ns string) (kube.Kind, error) {
	k, ok := kube.CustomResourceKind(crd, ns)
	if !ok {
		return kube.Kind{}, echo.NewHTTPError(http.StatusConflict, crd.Name+" serves no version, so its objects cannot be read through the API.")
	}
	return k, nil
}

// CRCrumbs are the crumbs up to the list of the CRD crdName's objects.
func CRCrumbs(crdName string) []model.Crumb {
	return []model.Crumb{
		{Label: "CustomResourceDefinitions", Href: urls.List(kube.CRDs)},
		{Label: crdName, Href: urls.Object(kube.CRDs, crdName)},
		{Label: "Objects", Href: urls.CRInstances(crdName)},
	}
}
