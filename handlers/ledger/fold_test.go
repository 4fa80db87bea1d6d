package ledger

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// withHousekeeping is filled with the API server's status writes to a
// FlowSchema after the people's entries, more than a page of them: the wall
// the ledger's first page was (issue 44).
func withHousekeeping(t *testing.T, n int) *memStore {
	s := filled(t, 3)
	for i := range n {
		s.entries = append(s.entries, ledger.Entry{Source: ledger.SourceAPIServer, ID: fmt.Sprintf("hk-%d", i),
			Time: t0.Add(5*time.Hour + time.Duration(i)*time.Second), User: "system:apiserver", Verb: "patch",
			Action: ledger.ActionStatus, Subresource: "status", Resource: "flowschemas", Kind: "flowschemas",
			Name: "exempt", Code: 200, Result: ledger.ResultOK})
	}
	return s
}

func TestFirstPageFoldsTheControlPlanesHousekeeping(t *testing.T) {
	e := newServer(t, withHousekeeping(t, 80), nil)
	rec, doc := get(t, e, urls.Ledger)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	if n := doc.Find(tid("ledger-row")).Length(); n != 8 {
		t.Errorf("%d rows, want the 8 people's entries without the 80 status writes", n)
	}
	fold := doc.Find(tid("ledger-fold"))
	if h, _ := fold.Attr("data-hidden"); h != "true" || !strings.Contains(fold.Text(), "Housekeeping by the control plane is hidden") {
		t.Fatalf("fold line %q (hidden %q)", fold.Text(), h)
	}
	if doc.Find(`input[name="housekeeping"]`).Length() != 0 {
		t.Errorf("the folded page's form would show housekeeping")
	}
	show, _ := fold.Find(tid("ledger-fold-toggle")).Attr("href")
	if u, _ := url.Parse(show); u.Path != urls.Ledger || u.Query().Get("housekeeping") != "show" {
		t.Fatalf("show link %q", show)
	}
	// One click shows them, and the next page and the exports keep it.
	_, doc = get(t, e, show)
	if n := doc.Find(tid("ledger-row")).Length(); n != ledger.DefaultLimit {
		t.Errorf("shown: %d rows, want a full page", n)
	}
	if n := doc.Find(`[data-testid="ledger-row"][data-action="status"]`).Length(); n != ledger.DefaultLimit {
		t.Errorf("shown: %d status rows on the first page, want %d", n, ledger.DefaultLimit)
	}
	for _, id := range []string{"ledger-next", "ledger-export-csv"} {
		if href, _ := doc.Find(tid(id)).Attr("href"); !strings.Contains(href, "housekeeping=show") {
			t.Errorf("%s %q loses housekeeping=show", id, href)
		}
	}
	if v, _ := doc.Find(tid("ledger-filter") + ` input[name="housekeeping"]`).Attr("value"); v != "show" {
		t.Errorf("the filter form loses housekeeping=show")
	}
	hide, _ := doc.Find(tid("ledger-fold-toggle")).Attr("href")
	if strings.Contains(hide, "housekeeping") {
		t.Errorf("hide link %q", hide)
	}
	// The default export folds as the page does.
	rec, _ = get(t, e, urls.LedgerCSV)
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil || len(rows) != 9 {
		t.Errorf("default export: %d rows (with the header), %v; want 9", len(rows), err)
	}
}

// A page that names the API server asks for exactly its entries.
func TestAUsersPageIsNeverFolded(t *testing.T) {
	_, doc := get(t, newServer(t, withHousekeeping(t, 3), nil), urls.LedgerUser("system:apiserver"))
	if n := doc.Find(tid("ledger-row")).Length(); n != 3 {
		t.Errorf("%d rows of system:apiserver, want its 3", n)
	}
	if doc.Find(tid("ledger-fold")).Length() != 0 {
		t.Errorf("a user's page says it folds")
	}
}

// An object's history tells all of the object's story, housekeeping included.
func TestHistoryIsNeverFolded(t *testing.T) {
	_, doc := get(t, newServer(t, withHousekeeping(t, 3), nil), urls.LedgerObject("flowschemas", "exempt", ""))
	if n := doc.Find(`[data-action="status"]`).Length(); n != 3 {
		t.Errorf("%d status steps in the history, want 3", n)
	}
}
