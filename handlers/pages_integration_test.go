//go:build integration

package handlers

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// liveServer is the console's handler wired to the real devcluster as one identity.
type liveServer struct {
	testServer
	cache *kube.Cache
}

// newLiveServer is a console acting as identity, reading from identity's
// shared cache (shared_cache_integration_test.go).
func newLiveServer(t *testing.T, identity string, readOnly bool) *liveServer {
	t.Helper()
	return newLiveServerOn(t, sharedCache(t, identity), testcluster.RestConfig(t, identity), identity, readOnly, nil)
}

// newLiveServerAs is newLiveServer acting with cfg (e.g. admin impersonating a
// test's own user) and showing identity as the user's name.
func newLiveServerAs(t *testing.T, cfg *rest.Config, identity string, readOnly bool) *liveServer {
	t.Helper()
	return newLiveServerWith(t, cfg, identity, readOnly, nil)
}

// newLiveServerWith is newLiveServerAs with more dependencies set by with (nil for none).
// Its cache is its own (syncedCache), stopped when the test ends: cfg may be
// any identity, and with may hand the cache to what outlives no test.
func newLiveServerWith(t *testing.T, cfg *rest.Config, identity string, readOnly bool, with func(*Deps)) *liveServer {
	t.Helper()
	return newLiveServerOn(t, syncedCache(t, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))), cfg, identity, readOnly, with)
}

// newLiveServerOn is a console reading from cache, acting with cfg.
func newLiveServerOn(t *testing.T, cache *kube.Cache, cfg *rest.Config, identity string, readOnly bool, with func(*Deps)) *liveServer {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	access, err := kube.NewAccess(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ls := &liveServer{cache: cache}
	ls.writer = nil
	writer := mustWriter(t, cfg)
	logins := auth.NewLoginTokens(func(tok string) { ls.token = tok })
	deps := Deps{Log: log, Cluster: cache, Access: access, Writer: writer,
		Sessions: auth.NewSessions(), Logins: logins, User: identity, ReadOnly: readOnly, Lookup: mustLookup(t, cfg)}
	if with != nil {
		with(&deps)
	}
	ls.e = New(deps)
	return ls
}

func mustWriter(t *testing.T, cfg *rest.Config) *kube.Writer {
	t.Helper()
	w, err := kube.NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// get fetches a page with the session and parses it.
func (ls *liveServer) get(t *testing.T, sess *http.Cookie, path string) (int, *goquery.Document, time.Duration) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.AddCookie(sess)
	start := time.Now()
	rec := ls.do(r)
	took := time.Since(start)
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, doc, took
}

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
