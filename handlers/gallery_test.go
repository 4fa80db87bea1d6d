package handlers

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func TestGalleryOnlyWithDevUI(t *testing.T) {
	for _, dev := range []bool{false, true} {
		ts := newFakeConsole(t, emptyCluster{}, denyAll{}, func(d *Deps) { d.DevUI = dev })
		r := httptest.NewRequest(http.MethodGet, "/ui", nil)
		r.AddCookie(ts.login(t))
		rec := ts.do(r)
		if !dev {
			if rec.Code != http.StatusNotFound {
				t.Fatalf("without --dev-ui: status %d, want 404", rec.Code)
			}
			continue
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("with --dev-ui: status %d", rec.Code)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(rec.Body.String()))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"gallery-badges", "gallery-banners", "gallery-table", "gallery-detail", "gallery-code", "gallery-actions"} {
			if doc.Find(`[data-testid="`+id+`"]`).Length() != 1 {
				t.Errorf("gallery section %s missing", id)
			}
		}
		if strings.Contains(rec.Body.String(), "<script>alert") {
			t.Error("sample hostile text was not escaped")
		}
	}
}
