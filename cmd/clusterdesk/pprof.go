package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// servePprof serves Go's profiles (net/http/pprof: heap, goroutines, CPU) on
// their own address, for a benchmark or a developer reading where the
// console's memory goes (make bench-pages sets it). Never on the console's
// port, and only on loopback: a goroutine dump or the command line is no
// business of anyone who can reach the pod. It returns the server and the
// address it listens on.
func servePprof(addr string, errc chan<- error) (*http.Server, string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", fmt.Errorf("--pprof-listen %s: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, "", fmt.Errorf("--pprof-listen %s: only a loopback address (127.0.0.1:PORT, [::1]:PORT or localhost:PORT)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("--pprof-listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { errc <- srv.Serve(ln) }()
	return srv, ln.Addr().String(), nil
}
