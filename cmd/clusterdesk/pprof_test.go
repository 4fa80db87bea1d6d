package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServePprofLoopbackOnly: the profiles are served on loopback, and an
// address anyone else could reach is refused before anything listens.
func TestServePprofLoopbackOnly(t *testing.T) {
	errc := make(chan error, 1)
	for _, addr := range []string{"0.0.0.0:0", ":0", "10.0.0.1:0", "example.com:0"} {
		if srv, _, err := servePprof(addr, errc); err == nil {
			srv.Close()
			t.Errorf("servePprof(%q) served; want it refused", addr)
		}
	}
	srv, addr, err := servePprof("127.0.0.1:0", errc)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "heap profile") {
		t.Errorf("GET heap: %s %.80q", resp.Status, body)
	}
}
