package kube

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// crdListPage is how many CRDs one LIST request of the CRD informer asks for.
const crdListPage = 10

// pagedCRDs is the client the CRD informer lists and watches with. Its LIST
// reads the CRDs a page at a time and packs each page's schemas (transform)
// before it asks for the next, then answers the informer with the whole list
// in one piece.
//
// Why: the reflector's first LIST asks the watch cache (resourceVersion 0),
// which ignores the limit and answers with every CRD at once, and the
// informer's transform runs only after the whole list is decoded. For a
// thousand real-world CRDs that is ~200 MB of JSON and ~500 MiB of decoded
// schemas alive together, at every start and relist: more than the pod has,
// whatever the steady state. A consistent read ("") honours the limit, and
// an informer accepts any list at least as new as it asked for. Paging is
// done here rather than by the reflector's pager, which would keep every
// page decoded until the last one (and, on an expired continue token, take
// a first page for the whole list).
type pagedCRDs struct {
	client    listWatchClient[*apiextensionsv1.CustomResourceDefinitionList]
	transform cache.TransformFunc
}

func (p pagedCRDs) List(ctx context.Context, opts metav1.ListOptions) (*apiextensionsv1.CustomResourceDefinitionList, error) {
	opts.ResourceVersion, opts.ResourceVersionMatch, opts.Continue, opts.Limit = "", "", "", crdListPage
	var all *apiextensionsv1.CustomResourceDefinitionList
	for {
		page, err := p.client.List(ctx, opts)
		if err != nil {
			// An expired continue token too: the reflector lists again.
			return nil, err
		}
		for i := range page.Items {
			if _, err := p.transform(&page.Items[i]); err != nil {
				return nil, err
			}
		}
		// Appending copies the items shallowly: their stubs, the keys of the
		// packed schemas, go along (CRDSchemas).
		if all == nil {
			all = page // its ListMeta: the resourceVersion of the snapshot every page reads
		} else {
			all.Items = append(all.Items, page.Items...)
		}
		if page.Continue == "" {
			all.Continue, all.RemainingItemCount = "", nil
			return all, nil
		}
		opts.Continue = page.Continue
	}
}

func (p pagedCRDs) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return p.client.Watch(ctx, opts)
}
