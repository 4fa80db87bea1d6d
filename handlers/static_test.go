package handlers

import (
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/clusterdesk/clusterdesk/static"
)

// TestStaticIsGzipped: the bundle is sent compressed to browsers that accept
// it (the page weight budget counts compressed bytes), and as is otherwise.
func TestStaticIsGzipped(t *testing.T) {
	ts := newTestServer(t, false)
	want, err := fs.ReadFile(static.FS, "favicon.svg")
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/static/favicon.svg", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := ts.do(req)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("status %d, Content-Encoding %q", rec.Code, rec.Header().Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil || string(got) != string(want) {
		t.Errorf("gzip body differs from the file (err %v)", err)
	}

	rec = ts.do(httptest.NewRequest(http.MethodGet, "/static/favicon.svg", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "" || rec.Body.String() != string(want) {
		t.Errorf("without Accept-Encoding: status %d, encoding %q", rec.Code, rec.Header().Get("Content-Encoding"))
	}
	if rec := ts.do(httptest.NewRequest(http.MethodGet, "/static/no-such-file.js", nil)); rec.Code != http.StatusNotFound {
		t.Errorf("a missing file: status %d", rec.Code)
	}
}
