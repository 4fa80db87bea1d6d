package handlers

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// Requests to the harness's consoles (harness_test.go) as a signed-in
// browser sends them: GETs with the session, form POSTs with the page's CSRF
// token (csrf_helpers_test.go).

// do serves r on the console.
func (ts *testServer) do(r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	ts.e.ServeHTTP(rec, r)
	return rec
}

// newGet is a GET of path with the session cookie sess.
func newGet(path string, sess *http.Cookie) *http.Request {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.AddCookie(sess)
	return r
}

// formPost is a POST of form to path with the session, as the console's own
// forms send it: same-origin, with the token the session's pages carry (as
// htmx sends it).
func formPost(t testing.TB, h http.Handler, sess *http.Cookie, path string, form url.Values) *http.Request {
	t.Helper()
	return formRequest(t, h, sess, http.MethodPost, path, form)
}

// formRequest is formPost with another method.
func formRequest(t testing.TB, h http.Handler, sess *http.Cookie, method, path string, form url.Values) *http.Request {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin") // what a browser sends for our own forms
	r.Header.Set("X-CSRF-Token", pageCSRFToken(t, h, withCookie(sess)))
	r.AddCookie(sess)
	return r
}

// request sends method to path with the session (a form POST when form is
// set, an htmx request when hx) and parses the answer.
func (ts *testServer) request(t testing.TB, sess *http.Cookie, method, path string, form url.Values, hx bool) (*httptest.ResponseRecorder, *goquery.Document) {
	t.Helper()
	var r *http.Request
	if form != nil {
		r = formRequest(t, ts.e, sess, method, path, form)
	} else {
		r = httptest.NewRequest(method, path, nil)
		r.AddCookie(sess)
	}
	if hx {
		r.Header.Set("HX-Request", "true")
	}
	rec := ts.do(r)
	return rec, parseDoc(t, rec.Body.Bytes())
}

// parseDoc parses an HTML answer.
func parseDoc(t testing.TB, body []byte) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// post sends form to path as the console's own forms do (formPost).
func (ts *testServer) post(t testing.TB, sess *http.Cookie, path string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	return ts.do(formPost(t, ts.e, sess, path, form))
}

// get fetches a page with the session and parses it.
func (ts *testServer) get(t testing.TB, sess *http.Cookie, path string) (int, *goquery.Document, time.Duration) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.AddCookie(sess)
	start := time.Now()
	rec := ts.do(r)
	took := time.Since(start)
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, doc, took
}

// getDoc GETs path with the session and parses the answer, whatever its status.
func (ts *testServer) getDoc(t testing.TB, sess *http.Cookie, path string) (int, *goquery.Document) {
	t.Helper()
	rec := ts.do(newGet(path, sess))
	return rec.Code, parseDoc(t, rec.Body.Bytes())
}
