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

// TestStaticIsCachedByItsContentHash: the URL a page links (with the file's
// content hash) is cached for a year; any other URL of the file is revalidated
// and answered 304 while the file is unchanged, gzip or not. Without this
// every page view downloaded and compiled the bundle again.
func TestStaticIsCachedByItsContentHash(t *testing.T) {
	ts := newTestServer(t, false)
	versioned := static.AssetPath("favicon.svg")
	hash, ok := static.Version("favicon.svg")
	if !ok || versioned != "/static/favicon.svg?v="+hash {
		t.Fatalf("AssetPath %q, Version %q %v", versioned, hash, ok)
	}
	rec := ts.do(httptest.NewRequest(http.MethodGet, versioned, nil))
	if got := rec.Header().Get("Cache-Control"); rec.Code != http.StatusOK || got != "public, max-age=31536000, immutable" {
		t.Errorf("GET %s: status %d, Cache-Control %q", versioned, rec.Code, got)
	}
	for _, url := range []string{"/static/favicon.svg", "/static/favicon.svg?v=000000000000"} {
		rec := ts.do(httptest.NewRequest(http.MethodGet, url, nil))
		if got := rec.Header().Get("Cache-Control"); rec.Code != http.StatusOK || got != "no-cache" || rec.Header().Get("ETag") != `"`+hash+`"` {
			t.Errorf("GET %s: status %d, Cache-Control %q, ETag %q", url, rec.Code, got, rec.Header().Get("ETag"))
		}
		for _, encoding := range []string{"", "gzip"} {
			req := httptest.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("If-None-Match", `"`+hash+`"`)
			req.Header.Set("Accept-Encoding", encoding)
			if rec := ts.do(req); rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
				t.Errorf("GET %s (Accept-Encoding %q) with its ETag: status %d, %d bytes", url, encoding, rec.Code, rec.Body.Len())
			}
		}
	}
	// A page is never cached: it holds the user's data and a CSRF token.
	if rec := ts.do(httptest.NewRequest(http.MethodGet, "/login", nil)); rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("/login: Cache-Control %q", rec.Header().Get("Cache-Control"))
	}
}
