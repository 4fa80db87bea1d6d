package handlers

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"k8s.io/apimachinery/pkg/types"
)

// TestLongCleanupSendsProgressWhileItRuns holds every deletion until the
// browser has received a progress line: the page's head and a count arrive
// while nothing is deleted yet (a proxy sees bytes, the admin sees a
// count), and once the deletions are let go the same response ends with the
// result per object. Fails on code that answers only when the deletions end:
// no byte arrives while they are held.
func TestLongCleanupSendsProgressWhileItRuns(t *testing.T) {
	cluster := decidedCluster(40, time.Now())
	release := make(chan struct{})
	ed := &deleteRecorder{deleted: map[string]types.UID{}, onDelete: func() { heldUntil(release) }}
	ts := newSlowCleanupTestServer(t, cluster, ed, time.Millisecond)
	sess := ts.login(t)
	_, doc := ts.request(t, sess, http.MethodGet, "/csrs/-/cleanup?state=decided&older=7d", nil, false)
	form := hiddenFieldsOf(doc.Find(`[data-testid="cleanup-form"]`))
	form.Set("confirm_count", "40")

	srv := httptest.NewServer(ts.e)
	defer srv.Close()
	r, err := http.NewRequest(http.MethodPost, srv.URL+"/csrs/-/cleanup/confirm", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.Header.Set("X-CSRF-Token", pageCSRFToken(t, ts.e, withCookie(sess)))
	r.AddCookie(sess)

	type answer struct {
		resp *http.Response
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.DefaultClient.Do(r)
		answered <- answer{resp, err}
	}()
	var resp *http.Response
	select {
	case a := <-answered:
		if a.err != nil {
			t.Fatal(a.err)
		}
		resp = a.resp
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("no answer while the deletions were held: the page waits for the end")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		close(release)
		t.Fatalf("status %d, want 200 with the progress page", resp.StatusCode)
	}

	// Read up to the end of the first progress line while the deletions
	// are still held (templ writes few newlines: read what arrives).
	body := bufio.NewReader(resp.Body)
	var head strings.Builder
	chunk := make([]byte, 4096)
	for !strings.Contains(head.String(), "</progress>") || !strings.Contains(head.String()[strings.Index(head.String(), "</progress>"):], "</p>") {
		n, err := body.Read(chunk)
		head.Write(chunk[:n])
		if err != nil {
			close(release)
			t.Fatalf("the page ended before a progress line (%v): %s", err, head.String())
		}
	}
	if n := len(ed.deletedNames()); n != 0 {
		t.Fatalf("%d deleted while every deletion was held", n)
	}
	if !strings.Contains(head.String(), "0 of 40 done") {
		t.Errorf("first progress line does not count 0 of 40: %s", head.String())
	}

	close(release)
	rest, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	page, err := goquery.NewDocumentFromReader(strings.NewReader(head.String() + string(rest)))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ed.deletedNames()); n != 40 {
		t.Fatalf("%d of 40 deleted", n)
	}
	last := page.Find(`[data-testid="cleanup-step"]`).Last()
	if last.AttrOr("data-done", "") != "40" || page.Find(`[data-testid="cleanup-finished"]`).Length() != 1 {
		t.Errorf("last progress line %q, want all 40 done", last.Text())
	}
	if got := page.Find(`[data-testid="cleanup-result-count"][data-result="deleted"]`).AttrOr("data-count", ""); got != "40" {
		t.Errorf("result says %q deleted, want 40", got)
	}
	if page.Find(`[data-testid="cleanup-back"]`).Length() != 1 || !strings.Contains(string(rest), "</html>") {
		t.Error("the page does not end with the way back and a closed document")
	}
}

// TestShortCleanupAnswersWithItsStatus: a cleanup that ends within the wait
// gets the ordinary result page, whose status says how it went.
func TestShortCleanupAnswersWithItsStatus(t *testing.T) {
	cluster := decidedCluster(3, time.Now())
	ed := &deleteRecorder{deleted: map[string]types.UID{}}
	ts := newSlowCleanupTestServer(t, cluster, ed, time.Minute)
	sess := ts.login(t)
	_, doc := ts.request(t, sess, http.MethodGet, "/csrs/-/cleanup?state=decided&older=7d", nil, false)
	form := hiddenFieldsOf(doc.Find(`[data-testid="cleanup-form"]`))
	rec, page := ts.request(t, sess, http.MethodPost, "/csrs/-/cleanup/confirm", form, false)
	if rec.Code != http.StatusOK || page.Find(`[data-testid="cleanup-step"]`).Length() != 0 {
		t.Fatalf("status %d with %d progress lines, want 200 and none", rec.Code, page.Find(`[data-testid="cleanup-step"]`).Length())
	}
	if got := page.Find(`[data-testid="cleanup-result-count"][data-result="deleted"]`).AttrOr("data-count", ""); got != "3" {
		t.Errorf("result says %q deleted, want 3", got)
	}
}
