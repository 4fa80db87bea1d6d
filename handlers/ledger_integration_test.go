//go:build integration

package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// TestLedgerForTheAuditorOnTheDevcluster: the read-only auditor's console on
// the devcluster, with a real SQLite ledger holding the story of a CSR the
// cluster does not hold: its history is there, marked gone; a CSR that
// exists links its history from its page; nothing of the ledger is a write.
func TestLedgerForTheAuditorOnTheDevcluster(t *testing.T) {
	store, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	gone := "ledger-gone-" + time.Now().UTC().Format("150405.000000")
	gone = strings.ReplaceAll(gone, ".", "-")
	story := testfixtures.LedgerCSRStory(t, gone, "kubernetes.io/kube-apiserver-client", "alice", "bob", 3,
		time.Now().UTC().Add(-3*time.Hour).Truncate(time.Second))
	if _, err := store.Append(context.Background(), story.Entries); err != nil {
		t.Fatal(err)
	}
	existing := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "ledger"})

	ls := newLiveServerOn(t, sharedCache(t, testcluster.Auditor), testcluster.RestConfig(t, testcluster.Auditor),
		testcluster.Auditor, true, func(d *Deps) { d.Ledger = store })
	sess := ls.login(t)

	code, doc, _ := ls.get(t, sess, urls.LedgerObject("csrs", gone, ""))
	if code != http.StatusOK {
		t.Fatalf("history of a deleted CSR: %d", code)
	}
	if doc.Find(`[data-testid="ledger-gone"]`).Length() != 1 || doc.Find(`[data-testid="ledger-step"]`).Length() != 4 {
		t.Errorf("gone banner %d, %d steps", doc.Find(`[data-testid="ledger-gone"]`).Length(), doc.Find(`[data-testid="ledger-step"]`).Length())
	}
	if got := doc.Find(`[data-testid="ledger-csr-serial"]`).Text(); got != story.Serial {
		t.Errorf("serial %q, want %q", got, story.Serial)
	}

	code, doc, _ = ls.get(t, sess, urls.Ledger+"?user=bob")
	if code != http.StatusOK || doc.Find(`[data-testid="ledger-row"]`).Length() != 1 {
		t.Errorf("the auditor's ledger page: %d, %d rows", code, doc.Find(`[data-testid="ledger-row"]`).Length())
	}
	if doc.Find(`[data-testid="ledger-hidden"]`).Length() != 0 {
		t.Errorf("the auditor may list every kind, yet the page hides some")
	}

	waitFor(t, "the cache holds "+existing, 15*time.Second, func() bool {
		_, err := ls.cache.CSR(existing)
		return err == nil
	})
	_, doc, _ = ls.get(t, sess, urls.CSR(existing))
	if href, _ := doc.Find(`[data-testid="history-link"]`).Attr("href"); href != urls.LedgerObject("csrs", existing, "") {
		t.Errorf("the CSR page's History link is %q", href)
	}
	code, doc, _ = ls.get(t, sess, urls.LedgerObject("csrs", existing, ""))
	if code != http.StatusOK || doc.Find(`[data-testid="ledger-current-object"]`).Length() != 1 {
		t.Errorf("an existing CSR's history does not link it: %d", code)
	}

	for _, m := range []string{http.MethodPost, http.MethodDelete} {
		r := httptest.NewRequest(m, urls.LedgerObject("csrs", gone, ""), nil)
		r.AddCookie(sess)
		if rec := ls.do(r); rec.Code < 400 {
			t.Errorf("%s on a history: %d", m, rec.Code)
		}
	}
}
