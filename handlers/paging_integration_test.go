//go:build integration

package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// pageOf reads a list page: row names, tab counts and the pager's next link.
type pageOf struct {
	rows  []string
	tabs  map[string]string
	next  string
	count string
}

func readPage(t *testing.T, ls *liveServer, sess *http.Cookie, path string) pageOf {
	t.Helper()
	code, doc, _ := ls.get(t, sess, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d", path, code)
	}
	p := pageOf{tabs: map[string]string{}}
	doc.Find(`[data-testid="list-row"]`).Each(func(_ int, s *goquery.Selection) {
		p.rows = append(p.rows, strings.TrimSpace(s.Find("a[href]").First().Text()))
	})
	doc.Find(`[data-testid^="tab-"]`).Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("data-testid")
		p.tabs[id] = strings.TrimSpace(s.Find(`[data-testid="tab-count"]`).Text())
	})
	p.next, _ = doc.Find(`[data-testid="page-next"]`).Attr("href")
	p.count = strings.Join(strings.Fields(doc.Find(`[data-testid="list-count"]`).Text()), " ")
	return p
}

// TestCSRQueuePagesOnTheDevcluster: past 100 CSRs the queue shows 100 rows a
// page; the next page continues the same order, the tab counts are the whole
// queue's on every page, and a filter pages over its own matches.
func TestCSRQueuePagesOnTheDevcluster(t *testing.T) {
	for i := range 105 {
		testcluster.CreateCSR(t, testcluster.CSR{Suffix: fmt.Sprintf("pg%03d", i), CommonName: fmt.Sprintf("paging-%03d", i)})
	}
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	all, err := cs.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	total := len(all.Items)
	waitFor(t, "the cache holds every CSR", 30*time.Second, func() bool { l, _ := ls.cache.CSRs(); return len(l) >= total })

	one := readPage(t, ls, sess, "/csrs")
	if len(one.rows) != present.PageSize || one.next == "" {
		t.Fatalf("page 1 of %d CSRs: %d rows, next %q", total, len(one.rows), one.next)
	}
	if want := fmt.Sprintf("Showing %d of %d", total, total); !strings.HasPrefix(one.count, want) || !strings.Contains(one.count, "rows 1–100") {
		t.Errorf("count line %q, want %q and the rows of this page", one.count, want)
	}
	two := readPage(t, ls, sess, one.next)
	if len(two.rows) != min(present.PageSize, total-present.PageSize) {
		t.Errorf("page 2: %d rows of %d CSRs", len(two.rows), total)
	}
	for _, n := range two.rows {
		if slices.Contains(one.rows, n) {
			t.Errorf("%s is on pages 1 and 2", n)
		}
	}
	if fmt.Sprint(one.tabs) != fmt.Sprint(two.tabs) || one.tabs["tab-all"] != fmt.Sprint(total) {
		t.Errorf("tab counts differ between pages or miss CSRs: %v / %v (total %d)", one.tabs, two.tabs, total)
	}

	// The filter pages over what it matches: 105 requests, page 2 holds 5.
	q := "/csrs?q=" + url.QueryEscape("paging-")
	f1 := readPage(t, ls, sess, q)
	if len(f1.rows) != 100 || !strings.HasPrefix(f1.count, "Showing 105 of ") || f1.next == "" {
		t.Fatalf("filtered page 1: %d rows, %q, next %q", len(f1.rows), f1.count, f1.next)
	}
	if u, _ := url.Parse(f1.next); u.Query().Get("q") != "paging-" || u.Query().Get("page") != "2" {
		t.Errorf("the next link %q keeps the filter", f1.next)
	}
	f2 := readPage(t, ls, sess, f1.next)
	if len(f2.rows) != 5 || f2.next != "" {
		t.Errorf("filtered page 2: %d rows, next %q", len(f2.rows), f2.next)
	}

	// htmx gets the fragment, carrying the view's URL for live refetches.
	r := httptest.NewRequest(http.MethodGet, f1.next, nil)
	r.Header.Set("HX-Request", "true")
	r.AddCookie(sess)
	rec := ls.do(r)
	body := rec.Body.String()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := doc.Find("#list-table").Attr("data-view-url"); v != f1.next || strings.Contains(body, "<html") {
		t.Errorf("fragment view URL %q, want %q", v, f1.next)
	}
}

// TestListPagesOnTheDevcluster: the generic lists page too; the pages together
// hold every object once, in name order (the real CRDs are over 100).
func TestListPagesOnTheDevcluster(t *testing.T) {
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	ext := clientset.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	crds, err := ext.ApiextensionsV1().CustomResourceDefinitions().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(crds.Items) <= present.PageSize {
		t.Fatalf("%d CRDs: the devcluster should hold the real-world fixtures (FIXTURES, over %d CRDs)", len(crds.Items), present.PageSize)
	}
	var want []string
	for _, c := range crds.Items {
		want = append(want, c.Name)
	}
	slices.Sort(want)
	var got []string
	path := "/crds"
	for i := 0; path != "" && i < 10; i++ {
		p := readPage(t, ls, sess, path)
		if len(p.rows) > present.PageSize {
			t.Errorf("%s: %d rows", path, len(p.rows))
		}
		got = append(got, p.rows...)
		path = p.next
	}
	if !slices.Equal(got, want) {
		t.Errorf("the pages of /crds hold %d names, the cluster %d (or another order)", len(got), len(want))
	}
}

// TestLargeYAMLLoadsOnDemand: a detail page does not inline a large object's
// YAML; the disclosure's URL gives it as a fragment (htmx) or as plain text.
func TestLargeYAMLLoadsOnDemand(t *testing.T) {
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	const name = "workflows.argoproj.io" // a real CRD of 1.2 MiB
	code, doc, _ := ls.get(t, sess, "/crds/"+name)
	if code != http.StatusOK {
		t.Fatalf("detail: %d", code)
	}
	href, ok := doc.Find(`[data-testid="yaml-link"]`).Attr("href")
	if !ok || doc.Find(`[data-testid="yaml"]`).Length() != 0 {
		t.Fatalf("the page inlines the YAML or has no link to it")
	}
	if got, _ := doc.Find(`details[hx-get]`).Attr("hx-get"); got != href {
		t.Errorf("the disclosure loads %q, the link is %q", got, href)
	}
	r := httptest.NewRequest(http.MethodGet, href, nil)
	r.Header.Set("HX-Request", "true")
	r.AddCookie(sess)
	rec := ls.do(r)
	frag, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if y := frag.Find(`[data-testid="yaml"]`).Text(); rec.Code != http.StatusOK || !strings.Contains(y, "name: "+name) || strings.Contains(y, "managedFields") {
		t.Errorf("fragment: %d, %d bytes of YAML", rec.Code, len(y))
	}
	r = httptest.NewRequest(http.MethodGet, href, nil)
	r.AddCookie(sess)
	rec = ls.do(r)
	if ct := rec.Header().Get("Content-Type"); rec.Code != http.StatusOK || !strings.HasPrefix(ct, "text/plain") || !strings.Contains(rec.Body.String(), "name: "+name) {
		t.Errorf("plain: %d %s", rec.Code, ct)
	}
	code, _, _ = ls.get(t, sess, "/crds/no-such-crd.example.com/yaml")
	if code != http.StatusNotFound {
		t.Errorf("unknown object: %d", code)
	}
}
