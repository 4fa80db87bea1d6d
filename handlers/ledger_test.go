package handlers

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// TestLedgerInTheConsole: the ledger's routes sit behind the sign-in and the
// kind check like every page, work in --read-only, and every object's page
// links an object's ledger history. The console here runs without a ledger
// (Deps.Ledger nil): the page says how to turn it on.
// handlers/ledger tests the pages against a store.
func TestLedgerInTheConsole(t *testing.T) {
	ts := newCSRConsole(t, newCSRCluster(fakeCSR(t, "=evil", apiClientSigner, "ann", time.Now())), listOnly{true}, readOnlyConsole(true))
	if rec := ts.do(httptest.NewRequest(http.MethodGet, urls.Ledger, nil)); rec.Code != http.StatusUnauthorized {
		t.Errorf("signed out: %d", rec.Code)
	}
	sess := ts.login(t)
	rec, doc := ts.request(t, sess, http.MethodGet, urls.Ledger, nil, false)
	if rec.Code != http.StatusOK || doc.Find(`[data-testid="ledger-off"]`).Length() != 1 {
		t.Fatalf("no ledger: %d", rec.Code)
	}
	if doc.Find(`[data-testid="nav-ledger"][aria-current="page"]`).Length() != 1 {
		t.Errorf("the navigation does not mark Ledger as current")
	}
	_, doc = ts.request(t, sess, http.MethodGet, urls.CSR("=evil"), nil, false)
	if href, _ := doc.Find(`[data-testid="history-link"]`).Attr("href"); href != urls.LedgerObject("csrs", "=evil", "") {
		t.Errorf("the CSR page's History link is %q", href)
	}
	for id, want := range map[string]string{"csr-ledger-requestor": urls.LedgerUser("ann"), "csr-ledger-signer": urls.LedgerSigner(apiClientSigner)} {
		if href, _ := doc.Find(`[data-testid="` + id + `"]`).Attr("href"); href != want {
			t.Errorf("%s links %q, want %q", id, href, want)
		}
	}
	rec, doc = ts.request(t, sess, http.MethodGet, urls.LedgerObject("csrs", "gone-long-ago", ""), nil, false)
	if rec.Code != http.StatusOK || !strings.Contains(doc.Find(`[data-testid="ledger-off"]`).Text(), "--ledger off") {
		t.Errorf("history of a name the cluster does not hold: %d", rec.Code)
	}

	denied := newCSRConsole(t, newCSRCluster(fakeCSR(t, "=evil", apiClientSigner, "ann", time.Now())), listOnly{false}, readOnlyConsole(true))
	sess = denied.login(t)
	if rec, _ := denied.request(t, sess, http.MethodGet, urls.LedgerObject("csrs", "=evil", ""), nil, false); rec.Code != http.StatusForbidden {
		t.Errorf("history of a kind the user may not list: %d", rec.Code)
	}
}
