package apfload

import (
	"context"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// DiscoverFrom is the sampler's list of instances from kube's
// (kube.APIServerInstances: the default/kubernetes EndpointSlices, each
// instance with its own client), for cmd/clusterdesk and the tests that
// build the sampler as it does. It lives here, not in kube, because kube
// imports no other package of the module.
func DiscoverFrom(list func(ctx context.Context) ([]kube.APIServerInstance, error)) Discover {
	return func(ctx context.Context) ([]Instance, error) {
		found, err := list(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]Instance, len(found))
		for i, f := range found {
			out[i] = Instance{Name: f.Address, Metrics: f.Metrics, Dump: f.Dump}
		}
		return out, nil
	}
}
