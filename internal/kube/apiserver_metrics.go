package kube

import (
	"context"
	"fmt"
	"io"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// metricsAccept asks for the Prometheus text format, which the console's
// parser reads; the API server would otherwise be free to pick OpenMetrics.
const metricsAccept = "text/plain;version=0.0.4"

// APIServerMetrics returns a function that opens the API server's /metrics
// as the identity in cfg (the console's own). The caller closes the body.
// It does no network I/O until called.
func APIServerMetrics(cfg *rest.Config) (func(ctx context.Context) (io.ReadCloser, error), error) {
	return apiServerGet(cfg, APIServerMetricsPath, metricsAccept)
}

// APIServerPriorityLevelDump returns a function that opens the API server's
// dump_priority_levels (APIServerPriorityLevelDumpPath, plain text) as the
// identity in cfg, like APIServerMetrics.
func APIServerPriorityLevelDump(cfg *rest.Config) (func(ctx context.Context) (io.ReadCloser, error), error) {
	return apiServerGet(cfg, APIServerPriorityLevelDumpPath, "text/plain")
}

func apiServerGet(cfg *rest.Config, path, accept string) (func(ctx context.Context) (io.ReadCloser, error), error) {
	cs, err := kubernetes.NewForConfig(clientConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", path, err)
	}
	rc := cs.Discovery().RESTClient()
	return func(ctx context.Context) (io.ReadCloser, error) {
		return rc.Get().AbsPath(path).SetHeader("Accept", accept).Stream(ctx)
	}, nil
}

// APIServerMetricsPath is the non-resource URL of the API server's metrics;
// reading them takes get on it (RBAC nonResourceURLs).
const APIServerMetricsPath = "/metrics"

// APIServerPriorityLevelDumpPath is the non-resource URL of the API server's
// debug dump of its priority levels; reading it takes get on it.
const APIServerPriorityLevelDumpPath = "/debug/api_priority_and_fairness/dump_priority_levels"
