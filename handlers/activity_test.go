package handlers

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/activity"
)

// listOnly answers list checks with allow; everything else is refused.
type listOnly struct{ allow bool }

func (a listOnly) Can(_ context.Context, verb, _, _, _, _ string) (bool, error) {
	return verb == "list" && a.allow, nil
}

func newActivityServer(t *testing.T, allow bool) (*csrTestServer, *activity.Store) {
	t.Helper()
	at := metav1.NewTime(time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC))
	old := fakeCSR(t, "=evil", apiClientSigner, "ann", time.Now().Add(-time.Hour))
	old.ResourceVersion = "10"
	cur := old.DeepCopy()
	cur.ResourceVersion = "11"
	cur.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: "True", Reason: "OK"}}
	cur.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "approver-bot", Operation: "Update", Subresource: "approval", Time: &at,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{}}}`)}}}
	store := activity.NewStore(activity.Options{})
	store.Add(activity.Change{Kind: "csrs", Old: old, New: cur})

	return newCSRConsole(t, newCSRCluster(cur), listOnly{allow}, readOnlyConsole(true), withActivity(store)), store
}

func TestActivityPageListsObservedAndManagedFields(t *testing.T) {
	ts, _ := newActivityServer(t, true)
	sess := ts.login(t)
	rec, doc := ts.request(t, sess, http.MethodGet, "/activity", nil, false)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	rows := doc.Find(`[data-testid="activity-row"]`)
	if rows.Length() != 2 {
		t.Fatalf("%d rows, want the watch event and the managedFields entry", rows.Length())
	}
	if rows.Filter(`[data-source="watch"]`).Find(`[data-testid="activity-who-cell"]`).Text() == "" {
		t.Errorf("the observed change credits no manager")
	}
	if !strings.Contains(doc.Find(`[data-testid="activity-about"]`).Text(), "audit log is the authority") {
		t.Errorf("the page does not say what it cannot know")
	}
	if doc.Find(`[data-testid="nav-activity"][aria-current="page"]`).Length() != 1 {
		t.Errorf("the navigation does not mark Activity as current")
	}

	_, doc = ts.request(t, sess, http.MethodGet, "/activity?source=watch&who=approver", nil, false)
	if n := doc.Find(`[data-testid="activity-row"]`).Length(); n != 1 {
		t.Fatalf("filtered: %d rows, want 1", n)
	}
	_, doc = ts.request(t, sess, http.MethodGet, "/activity?who=nobody", nil, false)
	if doc.Find(`[data-testid="activity-empty"]`).Length() != 1 {
		t.Fatalf("no empty state for a filter matching nothing")
	}
	href, _ := doc.Find(`[data-testid="activity-export-csv"]`).Attr("href")
	if href != "/activity.csv?who=nobody" {
		t.Fatalf("CSV export link %q does not carry the filter", href)
	}
}

func TestActivityCSVExportIsNeutralised(t *testing.T) {
	ts, _ := newActivityServer(t, true)
	sess := ts.login(t)
	for _, path := range []string{"/activity.csv", "/activity?format=csv"} {
		rec, _ := ts.request(t, sess, http.MethodGet, path, nil, false)
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") ||
			!strings.Contains(rec.Header().Get("Content-Disposition"), "attachment") {
			t.Fatalf("%s: status %d headers %v", path, rec.Code, rec.Header())
		}
		rows, err := csv.NewReader(bytes.NewReader(rec.Body.Bytes())).ReadAll()
		if err != nil || len(rows) != 3 {
			t.Fatalf("%s: %d rows, err %v", path, len(rows), err)
		}
		for _, r := range rows[1:] {
			if r[2] != "'=evil" {
				t.Errorf("%s: name cell %q not neutralised", path, r[2])
			}
		}
	}
	rec, _ := ts.request(t, sess, http.MethodGet, "/activity.json?kind=csrs", nil, false)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"observingSince"`) || !strings.Contains(rec.Body.String(), `"=evil"`) {
		t.Fatalf("JSON export: %d %s", rec.Code, rec.Body.String())
	}
}

func TestActivityHidesKindsTheUserMayNotList(t *testing.T) {
	ts, _ := newActivityServer(t, false)
	sess := ts.login(t)
	_, doc := ts.request(t, sess, http.MethodGet, "/activity", nil, false)
	if n := doc.Find(`[data-testid="activity-row"]`).Length(); n != 0 {
		t.Fatalf("%d rows shown to a user who may not list CSRs", n)
	}
	if !strings.Contains(doc.Find(`[data-testid="activity-hidden"]`).Text(), "CertificateSigningRequests") {
		t.Errorf("the page does not say which kinds are hidden")
	}
	rec, _ := ts.request(t, sess, http.MethodGet, "/activity.csv", nil, false)
	if strings.Contains(rec.Body.String(), "evil") {
		t.Fatalf("the export leaks a hidden kind: %s", rec.Body.String())
	}
	rec, _ = ts.request(t, sess, http.MethodGet, "/csrs/=evil/history", nil, false)
	if rec.Code != http.StatusForbidden {
		t.Fatalf("history of a hidden kind: status %d", rec.Code)
	}
}

func TestHistoryShowsDiffBetweenObservedVersions(t *testing.T) {
	ts, _ := newActivityServer(t, true)
	sess := ts.login(t)
	rec, doc := ts.request(t, sess, http.MethodGet, "/csrs/=evil/history", nil, false)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	if doc.Find(`[data-testid="history-entry"]`).Length() != 1 {
		t.Fatalf("no observed entry")
	}
	added := doc.Find(`[data-testid="history-diff"] [data-testid="diff-line"][data-kind="added"]`).Text()
	if !strings.Contains(added, "type: Approved") {
		t.Fatalf("the diff lacks the added condition: %q", added)
	}
	if strings.Contains(rec.Body.String(), "BEGIN CERTIFICATE REQUEST") {
		t.Fatalf("the history shows the PEM request")
	}
	if doc.Find(`[data-testid="activity-table"] [data-testid="activity-row"]`).Length() != 1 {
		t.Fatalf("the current managedFields are not listed")
	}
}

func TestActivityRoutesResolve(t *testing.T) {
	ts, _ := newActivityServer(t, true)
	for path, want := range map[string]string{
		"/activity": "/activity", "/activity.csv": "/activity.csv", "/activity.json": "/activity.json",
		"/csrs/x/history": "/:kind/:name/history", "/crds/x/history": "/:kind/:name/history",
		"/flowschemas/x/history": "/:kind/:name/history", "/validatingwebhooks/x/history": "/:kind/:name/history",
	} {
		c := ts.e.NewContext(httptest.NewRequest(http.MethodGet, path, nil), httptest.NewRecorder())
		ts.e.Router().Find(http.MethodGet, path, c)
		if c.Path() != want {
			t.Errorf("GET %s routes to %q, want %q", path, c.Path(), want)
		}
	}
}

// BenchmarkActivityPage renders /activity over 1,000 cached CSRs with two
// managedFields entries each and a full ring of 5,000 observed changes.
func BenchmarkActivityPage(b *testing.B) {
	at := metav1.NewTime(time.Now().Add(-time.Hour))
	var items []*certificatesv1.CertificateSigningRequest
	store := activity.NewStore(activity.Options{})
	for i := range 1000 {
		c := fakeCSR(b, fmt.Sprintf("csr-%04d", i), apiClientSigner, "ann", time.Now().Add(-time.Hour))
		c.ResourceVersion = "1"
		c.ManagedFields = []metav1.ManagedFieldsEntry{
			{Manager: "kubectl", Operation: "Update", Time: &at, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:request":{},"f:signerName":{}}}`)}},
			{Manager: "approver", Operation: "Update", Subresource: "approval", Time: &at, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{}}}`)}},
		}
		items = append(items, c)
	}
	for i := range activity.DefaultCapacity {
		old := items[i%len(items)]
		cur := old.DeepCopy()
		cur.ResourceVersion = fmt.Sprint(i + 2)
		cur.Labels = map[string]string{"n": fmt.Sprint(i)}
		store.Add(activity.Change{Kind: "csrs", Old: old, New: cur})
	}
	ts := newCSRConsole(b, newCSRCluster(items...), listOnly{true}, withActivity(store))
	sess := ts.login(b)
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodGet, "/activity", nil)
		r.AddCookie(sess)
		if rec := ts.do(r); rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
