package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// listPage is how many objects' metadata one LIST of ListMetadata asks for.
const listPage = 500

// ListMetadata lists the metadata of k's objects that match the label
// selector ("" for all), in k.Namespace or, when it is empty, in every
// namespace: a metadata-only, paged LIST, so a cleanup of thousands of custom
// resources never loads their bodies.
func (e *Editor) ListMetadata(ctx context.Context, k Kind, selector string) ([]metav1.PartialObjectMetadata, error) {
	if k.Version == "" {
		return nil, errNoVersion
	}
	r := e.meta.Resource(schema.GroupVersionResource{Group: k.Group, Version: k.Version, Resource: k.Resource})
	var out []metav1.PartialObjectMetadata
	opts := metav1.ListOptions{LabelSelector: selector, Limit: listPage}
	for {
		var (
			list *metav1.PartialObjectMetadataList
			err  error
		)
		if k.Namespace != "" {
			list, err = r.Namespace(k.Namespace).List(ctx, opts)
		} else {
			list, err = r.List(ctx, opts)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, list.Items...)
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}
