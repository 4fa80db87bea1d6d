package main

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// apiServerInstances lets the load sampler read every API server instance
// listed in the default/kubernetes EndpointSlices at its own address (issue
// 30: through the Service, each read lands on one instance at random); the
// sampler falls back to the kubeconfig's server when none answers there.
func apiServerInstances(cfg *rest.Config) (apfload.Discover, error) {
	list, err := kube.APIServerInstances(cfg)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) ([]apfload.Instance, error) {
		found, err := list(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]apfload.Instance, len(found))
		for i, f := range found {
			out[i] = apfload.Instance{Name: f.Address, Metrics: f.Metrics, Dump: f.Dump}
		}
		return out, nil
	}, nil
}
