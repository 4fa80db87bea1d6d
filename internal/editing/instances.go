package editing

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Instances is one page of a CRD's custom resources, read as the user.
type Instances struct {
	// Count is how many there are, when CountErr is nil (the page shows no
	// count otherwise: the list itself says what went wrong).
	Count    kube.CRCount
	CountErr error
	Table    *metav1.Table
}

// ListInstances counts crd's custom resources of kind k and reads one page
// (limit and the continue token cont) of those whose labels selector selects
// (kubectl -l syntax; "" for all) in the API server's Table format. The
// error is the list's.
func (s *Service) ListInstances(ctx context.Context, k kube.Kind, crd *unstructured.Unstructured, limit int64, cont, selector string) (Instances, error) {
	var out Instances
	out.Count, out.CountErr = s.API.CountCustomResources(ctx, crd)
	var err error
	out.Table, err = s.API.Table(ctx, k, limit, cont, selector)
	return out, err
}
