package handlers

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHSTSOnlyOverTLS serves the console over a real TLS listener and over
// plain HTTP: only the TLS answers carry Strict-Transport-Security, on public
// pages and errors alike.
func TestHSTSOnlyOverTLS(t *testing.T) {
	ts := newTestServer(t, false)
	tlsSrv := httptest.NewTLSServer(ts.e)
	t.Cleanup(tlsSrv.Close)
	plain := httptest.NewServer(ts.e)
	t.Cleanup(plain.Close)
	for _, path := range []string{"/healthz", "/login", "/csrs", "/no-such-page"} {
		resp, err := tlsSrv.Client().Get(tlsSrv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Strict-Transport-Security"); got != "max-age=31536000" || resp.TLS == nil {
			t.Errorf("over TLS, %s (status %d): Strict-Transport-Security %q, want max-age=31536000", path, resp.StatusCode, got)
		}
		resp, err = http.Get(plain.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Strict-Transport-Security"); got != "" {
			t.Errorf("over plain HTTP, %s: Strict-Transport-Security %q, want none", path, got)
		}
	}
}
