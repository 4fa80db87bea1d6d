package apfload

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The errors cannotReach sorts, as net/http really returns them on loopback
// (client-go's transport is net/http's): a closed port and an untrusted
// certificate cannot be reached; a server that accepts and then does not
// answer before the deadline is there.
func TestCannotReachRealErrors(t *testing.T) {
	get := func(url string, timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		dialer := &net.Dialer{Timeout: time.Second}
		client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("GET %s answered", url)
		}
		return err
	}

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "https://" + closed.Addr().String() + "/metrics"
	closed.Close()
	if err := get(closedURL, 3*time.Second); !cannotReach(err) {
		t.Errorf("a closed port: cannotReach(%v) = false", err)
	}

	untrusted := httptest.NewUnstartedServer(http.NotFoundHandler())
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // its handshake error is the point
	untrusted.StartTLS()
	defer untrusted.Close()
	if err := get(untrusted.URL+"/metrics", 3*time.Second); !cannotReach(err) {
		t.Errorf("an untrusted certificate: cannotReach(%v) = false", err)
	}

	release := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer hanging.Close()
	defer close(release)
	if err := get(hanging.URL+"/metrics", 200*time.Millisecond); cannotReach(err) {
		t.Errorf("a server that accepted and did not answer: cannotReach(%v) = true", err)
	}
}
