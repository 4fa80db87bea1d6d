//go:build integration

package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

var listPaths = []string{"/csrs", "/flowschemas", "/prioritylevels", "/crds", "/validatingwebhooks", "/csidrivers"}

func TestListAndDetailPagesOnTheDevcluster(t *testing.T) {
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)

	code, home, _ := ls.get(t, sess, "/")
	if code != http.StatusOK || home.Find(`[data-testid^="home-kind-"]`).Length() != len(kube.AllKinds()) {
		t.Fatalf("home: status %d, %d kind cards", code, home.Find(`[data-testid^="home-kind-"]`).Length())
	}
	for _, path := range listPaths {
		t.Run(path, func(t *testing.T) {
			code, doc, took := ls.get(t, sess, path)
			rows := doc.Find(`[data-testid="list-row"]`)
			if code != http.StatusOK || rows.Length() == 0 {
				t.Fatalf("status %d with %d rows", code, rows.Length())
			}
			t.Logf("%s: %d rows in %v", path, rows.Length(), took)

			link, ok := rows.First().Find("a[href]").Attr("href")
			if !ok {
				t.Fatal("first row has no link")
			}
			code, detail, _ := ls.get(t, sess, link)
			if code != http.StatusOK {
				t.Fatalf("detail %s: status %d", link, code)
			}
			name := strings.TrimSpace(detail.Find(`[data-testid="detail-name"]`).Text())
			yaml := detail.Find(`[data-testid="yaml"]`).Text()
			if name == "" || !strings.Contains(yaml, "name: "+name) || strings.Contains(yaml, "managedFields") {
				t.Errorf("detail %s: name %q, yaml without the name or with managedFields", link, name)
			}

			code, _, _ = ls.get(t, sess, path+"/no-such-object-xyz")
			if code != http.StatusNotFound {
				t.Errorf("unknown name: status %d, want 404", code)
			}
		})
	}
}

func TestFilterAndSortOnTheServer(t *testing.T) {
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	_, all, _ := ls.get(t, sess, "/prioritylevels?sort=name")
	names := all.Find(`[data-testid="list-row"]`).Map(func(_ int, s *goquery.Selection) string { v, _ := s.Attr("id"); return v })
	if !sort.StringsAreSorted(names) || len(names) < 3 {
		t.Fatalf("rows not sorted by name: %v", names)
	}
	_, desc, _ := ls.get(t, sess, "/prioritylevels?sort=name&dir=desc")
	if first, _ := desc.Find(`[data-testid="list-row"]`).First().Attr("id"); first != names[len(names)-1] {
		t.Errorf("descending first row = %q, want %q", first, names[len(names)-1])
	}
	_, filtered, _ := ls.get(t, sess, "/prioritylevels?q="+url.QueryEscape("exempt"))
	rows := filtered.Find(`[data-testid="list-row"]`)
	if rows.Length() == 0 || rows.Length() >= len(names) {
		t.Errorf("filter 'exempt' kept %d of %d rows", rows.Length(), len(names))
	}

	r := httptest.NewRequest(http.MethodGet, "/prioritylevels?q=exempt", nil)
	r.Header.Set("HX-Request", "true")
	r.AddCookie(sess)
	rec := ls.do(r)
	if strings.Contains(rec.Body.String(), "<html") || !strings.Contains(rec.Body.String(), `id="list-table"`) {
		t.Errorf("an htmx request should get the table fragment only")
	}
}

func TestForbiddenKindShowsABanner(t *testing.T) {
	// The approver may read CSRs and nothing else the console shows.
	ls := newLiveServer(t, testcluster.Approver, false)
	sess := ls.login(t)
	code, doc, _ := ls.get(t, sess, "/crds")
	if code != http.StatusForbidden || doc.Find(`[data-testid="banner-forbidden"]`).Length() != 1 {
		t.Fatalf("status %d; forbidden banner: %d", code, doc.Find(`[data-testid="banner-forbidden"]`).Length())
	}
	if doc.Find(`[data-testid="list-row"]`).Length() != 0 {
		t.Fatal("rows of a forbidden kind were shown")
	}
	code, doc, _ = ls.get(t, sess, "/csrs")
	if code != http.StatusOK || doc.Find(`[data-testid="list-row"]`).Length() == 0 {
		t.Fatalf("approver's CSR list: status %d", code)
	}
}

func TestCSRWithInvalidRequestStillRenders(t *testing.T) {
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	csrs, err := ls.cache.CSRs()
	if err != nil {
		t.Fatal(err)
	}
	var bad string
	for _, c := range csrs {
		if !strings.Contains(string(c.Spec.Request), "BEGIN CERTIFICATE REQUEST") {
			bad = c.Name
		}
	}
	if bad == "" {
		t.Fatal("the demo seed has no CSR with an invalid request")
	}
	code, doc, _ := ls.get(t, sess, "/csrs/"+bad)
	if code != http.StatusOK || doc.Find(`[data-testid="banner-bad-request"]`).Length() != 1 {
		t.Fatalf("status %d; bad-request banner %d", code, doc.Find(`[data-testid="banner-bad-request"]`).Length())
	}
}
