//go:build integration

package ledger

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// openSQLite is a real ledger in a fresh SQLite file (internal/ledger's
// embedded backend), closed when the test ends.
func openSQLite(t *testing.T) ledger.Store {
	t.Helper()
	s, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "ledger.db"),
		ledger.Options{Retention: 400 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func appendAll(t *testing.T, s ledger.Store, entries []ledger.Entry) {
	t.Helper()
	for len(entries) > 0 {
		n := min(len(entries), 1000)
		if _, err := s.Append(context.Background(), entries[:n]); err != nil {
			t.Fatal(err)
		}
		entries = entries[n:]
	}
}

// TestLedgerViewsOnSQLite fills a real store with the shapes the ingestion
// writes: a CSR's story with 200 SANs, deleted; an object with a 253-character
// name; a storm of one user's writes (10,000 entries in all), and reads
// every view through it.
func TestLedgerViewsOnSQLite(t *testing.T) {
	s := openSQLite(t)
	start := time.Now().UTC().Add(-30 * 24 * time.Hour).Truncate(time.Second)
	story := testfixtures.LedgerCSRStory(t, "alice-laptop", "example.com/client", "alice", "bob", 200, start)
	appendAll(t, s, story.Entries)
	long := strings.Repeat("a.", 126) + "b"
	var storm []ledger.Entry
	for i := range 10000 - len(story.Entries) - 1 {
		storm = append(storm, ledger.Entry{Source: ledger.SourceAPIServer, ID: fmt.Sprintf("storm-%05d", i),
			Time: start.Add(time.Hour + time.Duration(i)*time.Second), User: "system:serviceaccount:ci:runaway",
			Groups: []string{"system:serviceaccounts"}, Verb: "patch", Action: ledger.ActionUpdate,
			APIGroup: "flowcontrol.apiserver.k8s.io", APIVersion: "v1", Resource: "flowschemas", Kind: "flowschemas",
			Name: "exempt", UID: "fs-uid", Code: 200, Result: ledger.ResultOK, Object: []byte(`{"kind":"FlowSchema"}`)})
	}
	storm = append(storm, ledger.Entry{Source: ledger.SourceConsole, ID: "console-long", Time: start.Add(4 * time.Hour),
		User: "carol", Impersonator: "system:serviceaccount:clusterdesk:clusterdesk", Verb: "update", Action: ledger.ActionUpdate,
		Resource: "flowschemas", Kind: "flowschemas", Name: long, Code: 200, Result: ledger.ResultOK, Diff: "@@ -1 +1 @@\n-a: 1\n+a: 2\n"})
	appendAll(t, s, storm)
	e := newServer(t, s, nil)

	// The ledger page at 10,000 entries: one page, newest first, its cost
	// the page's rows.
	began := time.Now()
	rec, doc := get(t, e, urls.Ledger)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %.500s", rec.Code, rec.Body)
	}
	t.Logf("ledger page at 10,000 entries: %v, %d bytes", time.Since(began), rec.Body.Len())
	if got := doc.Find(tid("ledger-entries")).Text(); got != "10,000 entries" {
		t.Errorf("header says %q", got)
	}
	if got := doc.Find(tid("ledger-retention")).Text(); got != "kept 400 days" {
		t.Errorf("retention %q", got)
	}
	if n := doc.Find(tid("ledger-row")).Length(); n != ledger.DefaultLimit {
		t.Errorf("%d rows", n)
	}

	// Keyset pages of the storm: the real store's cursors, never a row twice.
	seen := map[string]bool{}
	target := urls.LedgerUser("system:serviceaccount:ci:runaway") + "&since=" + start.Format("2006-01-02T15:04")
	for pages := 0; target != "" && pages < 4; pages++ {
		rec, doc := get(t, e, target)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %.300s", target, rec.Code, rec.Body)
		}
		doc.Find(tid("ledger-row") + " time").Each(func(_ int, tm *goquery.Selection) {
			at, _ := tm.Attr("datetime")
			if seen[at] {
				t.Errorf("page %d repeats %s", pages, at)
			}
			seen[at] = true
		})
		target, _ = doc.Find(tid("ledger-next")).Attr("href")
	}
	if len(seen) != 4*ledger.DefaultLimit {
		t.Errorf("%d rows over four pages", len(seen))
	}
	if rec, _ := get(t, e, urls.Ledger+"?after=bm90LWEtY3Vyc29y"); rec.Code != http.StatusBadRequest {
		t.Errorf("a forged cursor: %d, want 400", rec.Code)
	}

	// The deleted CSR's story, 200 SANs behind "more".
	rec, doc = get(t, e, urls.LedgerObject("csrs", "alice-laptop", ""))
	if rec.Code != http.StatusOK {
		t.Fatalf("history: %d", rec.Code)
	}
	var actions []string
	doc.Find(tid("ledger-step")).Each(func(_ int, s *goquery.Selection) { actions = append(actions, s.AttrOr("data-action", "")) })
	if !slices.Equal(actions, []string{"create", "approve", "issue", "delete"}) {
		t.Errorf("steps %v", actions)
	}
	if got := doc.Find(tid("ledger-csr-serial")).Text(); got != story.Serial {
		t.Errorf("serial %q, want %q", got, story.Serial)
	}
	if !strings.Contains(doc.Find(tid("ledger-csr-request")).Text(), "host-199.alice-laptop.example.com") {
		t.Errorf("the 200th SAN is not listed")
	}

	// The 253-character name: its history, linked from its row.
	rec, doc = get(t, e, urls.LedgerObject("flowschemas", long, ""))
	if rec.Code != http.StatusOK || doc.Find(tid("ledger-step")).Length() != 1 || doc.Find(tid("ledger-step-diff")).Length() != 1 {
		t.Errorf("the long name's history: %d, %d steps", rec.Code, doc.Find(tid("ledger-step")).Length())
	}

	// The storm's export streams every one of its rows.
	rec, _ = get(t, e, urls.LedgerNDJSON+"?user=system:serviceaccount:ci:runaway")
	lines := 0
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		lines++
	}
	if lines != len(storm)-1 {
		t.Errorf("export of %d lines, want %d", lines, len(storm)-1)
	}
}
