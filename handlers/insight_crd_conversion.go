package handlers

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/clusterdesk/clusterdesk/internal/crd"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// addConversionBackend looks up the Service of a CRD's conversion webhook (one
// GET and one EndpointSlice LIST, as the user, when the page is opened) and
// puts what it found on the page, as the webhook pages do.
func (h *Handlers) addConversionBackend(ctx context.Context, p *model.DetailPage, c *apiextensionsv1.CustomResourceDefinition) {
	key := crd.ConversionService(c)
	if key == nil {
		return
	}
	if b, ok := h.backendFinder().Service(ctx, *key); ok {
		present.AddConversionBackend(p, c, b)
	}
}
