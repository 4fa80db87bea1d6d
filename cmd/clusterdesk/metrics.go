package main

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/metrics"
)

// serveMetrics serves /metrics, and nothing else, on its own address: a
// Prometheus scraper has no session, and the console's port stays behind
// sign-in for every route. The metrics carry no object names or user data
// (route templates, counts per kind, runtime figures); still, keep the address
// reachable only by the scraper (a NetworkPolicy, see deploy/).
// It returns the server and the address it listens on.
func serveMetrics(addr string, reg *metrics.Registry, errc chan<- error) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("--metrics-listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", reg.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
	go func() { errc <- srv.Serve(ln) }()
	return srv, ln.Addr().String(), nil
}
