package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// BenchmarkLargestWebhookPage renders the detail page of the real-world
// ValidatingWebhookConfiguration with the most webhooks, without a cluster
// (no Service lookups: what the page itself costs).
func BenchmarkLargestWebhookPage(b *testing.B) {
	ts, fc := newFixtureServer(b)
	sess := ts.login(b)
	var name string
	for n, c := range fc.webhooks {
		if name == "" || len(c.Webhooks) > len(fc.webhooks[name].Webhooks) {
			name = n
		}
	}
	path := "/validatingwebhooks/" + url.PathEscape(name)
	// A cached object has a resourceVersion (the fixtures have none): the
	// page's YAML is then rendered once per version.
	fc.webhooks[name].ResourceVersion = "1"
	b.ResetTimer()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.AddCookie(sess)
		rec := ts.do(r)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d", path, rec.Code)
		}
		b.SetBytes(int64(rec.Body.Len()))
	}
	b.Logf("%s: %d webhooks", name, len(fc.webhooks[name].Webhooks))
}
