package handlers

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/ingest"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// listOnly answers list checks with allow; everything else is refused.
type listOnly struct{ allow bool }

func (a listOnly) Can(_ context.Context, verb, _, _, _, _ string) (bool, error) {
	return verb == "list" && a.allow, nil
}

// newHistoryServer is a read-only console with a ledger (SQLite) holding one
// version of the CSR "=evil" its watch observed: approved by the field
// manager approver-bot. (The in-memory activity view's tests, issue 44:
// their facts are checked on the one history stack.)
func newHistoryServer(t *testing.T, allow bool) *csrTestServer {
	t.Helper()
	at := metav1.NewTime(time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC))
	old := fakeCSR(t, "=evil", apiClientSigner, "ann", time.Now().Add(-time.Hour))
	old.ResourceVersion, old.UID = "10", "uid-evil"
	cur := old.DeepCopy()
	cur.ResourceVersion = "11"
	cur.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: "True", Reason: "OK"}}
	cur.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "approver-bot", Operation: "Update", Subresource: "approval", Time: &at,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{}}}`)}}}
	store, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	e, ok := ingest.WatchEntry(kube.ObjectChange{Kind: kube.CSRs, Old: old, New: cur}, at.Time)
	if !ok {
		t.Fatal("no entry of the observed version")
	}
	if _, err := store.Append(context.Background(), []ledger.Entry{e}); err != nil {
		t.Fatal(err)
	}
	return newCSRConsole(t, newCSRCluster(cur), listOnly{allow}, readOnlyConsole(true), withLedger(store))
}

// The ledger's list of observed versions (what /activity was) shows the
// version the watch saw, crediting its field manager, filters and exports
// it; the activity view's URLs lead there with their filter.
func TestObservedVersionsInTheLedger(t *testing.T) {
	ts := newHistoryServer(t, true)
	sess := ts.login(t)
	rec, doc := ts.request(t, sess, http.MethodGet, "/ledger?source=watch", nil, false)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	rows := doc.Find(`[data-testid="ledger-row"]`)
	if rows.Length() != 1 {
		t.Fatalf("%d rows, want the observed version", rows.Length())
	}
	if rows.Find(`[data-testid="ledger-manager"]`).Text() != "approver-bot" {
		t.Errorf("the observed version credits no manager: %q", rows.Find(`[data-testid="ledger-who"]`).Text())
	}
	if href, _ := rows.Find(`[data-testid="ledger-history-link"]`).Attr("href"); href != urls.LedgerObject("csrs", "=evil", "") {
		t.Errorf("the row links %q, not the object's history", href)
	}
	if !strings.Contains(doc.Find("body").Text(), "audit log is the authority") {
		t.Errorf("the page does not say what it cannot know")
	}
	if doc.Find(`[data-testid="nav-activity"]`).Length() != 0 || doc.Find(`[data-testid="nav-ledger"]`).Length() != 1 {
		t.Errorf("the navigation has an Activity page beside the Ledger")
	}
	_, doc = ts.request(t, sess, http.MethodGet, "/ledger?source=watch&manager=approver-bot", nil, false)
	if n := doc.Find(`[data-testid="ledger-row"]`).Length(); n != 1 {
		t.Fatalf("filtered by manager: %d rows, want 1", n)
	}
	_, doc = ts.request(t, sess, http.MethodGet, "/ledger?source=watch&user=nobody", nil, false)
	if n := doc.Find(`[data-testid="ledger-row"]`).Length(); n != 0 {
		t.Fatalf("filtered: %d rows, want none", n)
	}
	href, _ := doc.Find(`[data-testid="ledger-export-csv"]`).Attr("href")
	if !strings.Contains(href, "source=watch") || !strings.Contains(href, "user=nobody") {
		t.Fatalf("CSV export link %q does not carry the filter", href)
	}
	for from, to := range map[string]string{
		"/activity":                              "/ledger?source=watch",
		"/activity?kind=csrs&since=2h&who=ann":   "/ledger?kind=csrs&manager=ann&since=2h&source=watch",
		"/activity?format=csv":                   "/ledger.csv?source=watch",
		"/activity.csv?kind=csrs":                "/ledger.csv?kind=csrs&source=watch",
		"/activity.json":                         "/ledger.ndjson?source=watch",
		"/csrs/=evil/history":                    urls.LedgerObject("csrs", "=evil", ""),
		"/csrs/=evil/history?format=json":        urls.LedgerObject("csrs", "=evil", "") + "?format=ndjson",
		"/activity?source=managedFields&who=%20": "/ledger?source=watch",
	} {
		rec, _ := ts.request(t, sess, http.MethodGet, from, nil, false)
		if rec.Code != http.StatusFound || rec.Header().Get("Location") != to {
			t.Errorf("GET %s: %d to %q, want %q", from, rec.Code, rec.Header().Get("Location"), to)
		}
	}
}

// The exports of observed versions neutralise formula cells (a name, a
// field manager are anyone's strings).
func TestObservedVersionsCSVExportIsNeutralised(t *testing.T) {
	ts := newHistoryServer(t, true)
	sess := ts.login(t)
	for _, path := range []string{"/ledger.csv?source=watch", urls.LedgerObject("csrs", "=evil", "") + "?format=csv"} {
		rec, _ := ts.request(t, sess, http.MethodGet, path, nil, false)
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") ||
			!strings.Contains(rec.Header().Get("Content-Disposition"), "attachment") {
			t.Fatalf("%s: status %d headers %v", path, rec.Code, rec.Header())
		}
		rows, err := csv.NewReader(bytes.NewReader(rec.Body.Bytes())).ReadAll()
		if err != nil || len(rows) != 2 {
			t.Fatalf("%s: %d rows, err %v", path, len(rows), err)
		}
		if name := rows[1][12]; name != "'=evil" {
			t.Errorf("%s: name cell %q not neutralised", path, name)
		}
		if m := rows[1][len(rows[1])-1]; m != "approver-bot" {
			t.Errorf("%s: manager cell %q", path, m)
		}
	}
	rec, _ := ts.request(t, sess, http.MethodGet, "/ledger.ndjson?source=watch&kind=csrs", nil, false)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"source":"watch"`) || !strings.Contains(rec.Body.String(), `"=evil"`) ||
		!strings.Contains(rec.Body.String(), `"manager":"approver-bot"`) {
		t.Fatalf("NDJSON export: %d %s", rec.Code, rec.Body.String())
	}
}

// A viewer who may not list a kind sees none of its observed versions, in
// the list, the export or the object's history (old URL or new).
func TestObservedVersionsHideKindsTheUserMayNotList(t *testing.T) {
	ts := newHistoryServer(t, false)
	sess := ts.login(t)
	_, doc := ts.request(t, sess, http.MethodGet, "/ledger?source=watch", nil, false)
	if n := doc.Find(`[data-testid="ledger-row"]`).Length(); n != 0 {
		t.Fatalf("%d rows shown to a user who may not list CSRs", n)
	}
	if !strings.Contains(doc.Find(`[data-testid="ledger-hidden"]`).Text(), "CertificateSigningRequests") {
		t.Errorf("the page does not say which kinds are hidden")
	}
	rec, _ := ts.request(t, sess, http.MethodGet, "/ledger.csv?source=watch", nil, false)
	if strings.Contains(rec.Body.String(), "evil") {
		t.Fatalf("the export leaks a hidden kind: %s", rec.Body.String())
	}
	for _, path := range []string{"/csrs/=evil/history", urls.LedgerObject("csrs", "=evil", "")} {
		if rec, _ := ts.request(t, sess, http.MethodGet, path, nil, false); rec.Code != http.StatusForbidden {
			t.Fatalf("history of a hidden kind at %s: status %d", path, rec.Code)
		}
	}
}

// The object's one history shows the observed version with the diff
// between the versions the watch saw, and the object's managedFields now.
func TestHistoryShowsDiffBetweenObservedVersions(t *testing.T) {
	ts := newHistoryServer(t, true)
	sess := ts.login(t)
	rec, doc := ts.request(t, sess, http.MethodGet, urls.LedgerObject("csrs", "=evil", ""), nil, false)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	if doc.Find(`[data-testid="ledger-step"]`).Length() != 1 {
		t.Fatalf("no observed step")
	}
	if doc.Find(`[data-testid="ledger-step-manager"]`).Text() != "approver-bot" {
		t.Errorf("the step credits no field manager")
	}
	added := doc.Find(`[data-testid="ledger-step-diff"] [data-testid="diff-line"][data-kind="added"]`).Text()
	if !strings.Contains(added, "type: Approved") {
		t.Fatalf("the diff lacks the added condition: %q", added)
	}
	if strings.Contains(rec.Body.String(), "BEGIN CERTIFICATE REQUEST") {
		t.Fatalf("the history shows the PEM request")
	}
	if doc.Find(`[data-testid="ledger-managers"] [data-testid="ledger-manager-row"]`).Length() != 1 {
		t.Fatalf("the current managedFields are not listed")
	}
}

func TestHistoryRoutesResolve(t *testing.T) {
	ts := newHistoryServer(t, true)
	for path, want := range map[string]string{
		"/activity": "/activity", "/activity.csv": "/activity.csv", "/activity.json": "/activity.json",
		"/csrs/x/history": "/:kind/:name/history", "/crds/x/history": "/:kind/:name/history",
		"/flowschemas/x/history": "/:kind/:name/history", "/validatingwebhooks/x/history": "/:kind/:name/history",
		"/ledger/csrs/x": urls.LedgerObjectRoute,
	} {
		c := ts.e.NewContext(httptest.NewRequest(http.MethodGet, path, nil), httptest.NewRecorder())
		ts.e.Router().Find(http.MethodGet, path, c)
		if c.Path() != want {
			t.Errorf("GET %s routes to %q, want %q", path, c.Path(), want)
		}
	}
}
