package handlers

import (
	"net/http"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/clusterdesk/clusterdesk/internal/testwait"
)

// Bounded waits of the handlers tests: a condition that never comes fails
// the test naming it (internal/testwait.Recv is the one for channels).

// waitFor polls cond until it holds or d passes.
func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pollPage fetches path until it answers 200: the object was just created and
// the cache may not have it yet.
func (ts *testServer) pollPage(t testing.TB, sess *http.Cookie, path string) *goquery.Document {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, doc, _ := ts.get(t, sess, path)
		if code == http.StatusOK {
			return doc
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: status %d after 20 s", path, code)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// heldUntil blocks a fake's call (a token review, a gated read) until the
// test closes release, for testwait.Within at the most: a test that fails
// before its release leaves no call of the console held for good.
func heldUntil(release <-chan struct{}) {
	select {
	case <-release:
	case <-time.After(testwait.Within):
	}
}
