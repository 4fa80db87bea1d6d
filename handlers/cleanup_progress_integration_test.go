//go:build integration

package handlers

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestCleanupProgressPageEndsWithEveryResult: 30 ticked drivers deleted one
// by one as the user, with the progress page sent at once (the wait set to a
// millisecond, as if they had taken long). The one response carries progress
// lines, ends on "all 30 done" and the result per object, and the API server
// has none of them left.
func TestCleanupProgressPageEndsWithEveryResult(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ls := newCleanupServer(t, testcluster.Admin, false, func(d *Deps) { d.CleanupProgressAfter = time.Millisecond })
	sess := ls.login(t)
	_, names := cleanupDrivers(t, cs, 30)
	ls.waitDriversCached(t, cs, names...)

	ticked := url.Values{}
	for n, uid := range driverUIDs(t, cs, names) {
		ticked.Add("names", string(uid)+"/"+n) // as the list's tick boxes carry them
	}
	rec := ls.post(t, sess, "/csidrivers/-/cleanup", ticked)
	preview := postDoc(t, rec)
	if rec.Code != http.StatusOK || previewCount(t, preview) != 30 {
		t.Fatalf("preview of 30 ticked drivers: status %d: %s", rec.Code, squash(preview.Selection))
	}
	form := hiddenFields(preview.Find(`[data-testid="cleanup-form"]`))
	form.Set("confirm_count", "30")
	rec = ls.post(t, sess, "/csidrivers/-/cleanup/confirm", form)
	page := postDoc(t, rec)
	steps := page.Find(`[data-testid="cleanup-steps"] [data-testid="cleanup-step"]`)
	if rec.Code != http.StatusOK || steps.Length() < 2 {
		t.Fatalf("confirm: status %d with %d progress lines, want 200 and the progress page: %s", rec.Code, steps.Length(), squash(page.Selection))
	}
	if last := steps.Last(); last.AttrOr("data-done", "") != "30" || last.Find(`[data-testid="cleanup-finished"]`).Length() != 1 {
		t.Errorf("the last progress line is %q, want all 30 done", squash(last))
	}
	if n := resultCount(page, "deleted"); n != 30 {
		t.Errorf("the result says %d deleted, want 30: %s", n, squash(page.Selection))
	}
	if left := driverUIDs(t, cs, names); len(left) != 0 {
		t.Errorf("still there after the cleanup: %v", left)
	}
}
