package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// CustomResources is the KindID of every custom resource's Kind: none of the
// console's own kinds (no cache, no list page of its own), so nothing keyed
// by a kind's ID mistakes a custom resource for one of them.
const CustomResources KindID = "customresources"

// CustomResourceKind is the Kind the Editor uses for the custom resources of
// crd in namespace (ignored for a cluster-scoped CRD), at the version the
// console reads: the storage version when it is served, else the first
// served one. ok is false when the CRD serves no version.
func CustomResourceKind(crd *apiextensionsv1.CustomResourceDefinition, namespace string) (k Kind, ok bool) {
	version := ""
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		if v.Storage || version == "" {
			version = v.Name
		}
	}
	if version == "" {
		return Kind{}, false
	}
	k = Kind{
		ID:       CustomResources,
		Title:    crd.Spec.Names.Kind,
		Singular: crd.Spec.Names.Kind,
		Group:    crd.Spec.Group,
		Version:  version,
		Resource: crd.Spec.Names.Plural,
	}
	if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
		k.Namespace = namespace
	}
	return k, true
}

// tableAccept asks the API server for the Table format, the columns kubectl
// prints: for a custom resource, its CRD's additionalPrinterColumns.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

func tableClient(c *rest.Config) (rest.Interface, error) {
	c = rest.CopyConfig(c)
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	c.AcceptContentTypes = tableAccept
	return rest.UnversionedRESTClientFor(c)
}

// Table lists the objects of k (in k.Namespace, or in all namespaces when it
// is empty) as the API server's Table: at most limit rows, from the position
// cont (the previous page's metadata.continue, "" for the first page). Each
// row carries its object's metadata (includeObject=Metadata), so names and
// namespaces link to the objects. selector, when set, is a label selector
// (kubectl -l syntax) the API server applies.
func (e *Editor) Table(ctx context.Context, k Kind, limit int64, cont, selector string) (*metav1.Table, error) {
	if k.Version == "" {
		return nil, fmt.Errorf("%s: %w", k.Title, errNoVersion)
	}
	path := []string{"/apis", k.Group, k.Version}
	if k.Group == "" {
		path = []string{"/api", k.Version}
	}
	if k.Namespace != "" {
		path = append(path, "namespaces", k.Namespace)
	}
	path = append(path, k.Resource)
	req := e.raw.Get().AbsPath(path...).
		SetHeader("Accept", tableAccept).
		Param("includeObject", string(metav1.IncludeMetadata)).
		Param("limit", strconv.FormatInt(limit, 10))
	if cont != "" {
		req = req.Param("continue", cont)
	}
	if selector != "" {
		// Custom resources have no informer: the API server filters the
		// page (a continue token is bound to the selector it was issued for).
		req = req.Param("labelSelector", selector)
	}
	raw, err := req.Do(ctx).Raw()
	if err != nil {
		// Asked for a Table, the client cannot decode the API server's Status
		// on an error by itself: read it here, so the error is an apierrors one.
		var st metav1.Status
		if json.Unmarshal(raw, &st) == nil && st.Kind == "Status" && st.Code >= 400 {
			return nil, &apierrors.StatusError{ErrStatus: st}
		}
		return nil, err
	}
	var t metav1.Table
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("the API server's table of %s: %w", k.Resource, err)
	}
	if t.Kind != "Table" {
		return nil, fmt.Errorf("the API server answered %q instead of a Table for %s", t.Kind, k.Resource)
	}
	return &t, nil
}
