package page

import (
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clusterdesk/clusterdesk/internal/kube"
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

// CRDObject is crd as the unstructured object the Editor counts with.
func CRDObject(crd *apiextensionsv1.CustomResourceDefinition) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		// A typed object from the cache always converts; an empty one makes the count fail visibly.
		return &unstructured.Unstructured{Object: map[string]any{}}
	}
	return &unstructured.Unstructured{Object: m}
}
