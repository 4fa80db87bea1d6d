package ledger

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/ledgerview"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

var (
	csrKind = kube.Kind{ID: kube.CSRs, Title: "CertificateSigningRequests", Singular: "CertificateSigningRequest",
		Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}
	fsKind = kube.Kind{ID: kube.FlowSchemas, Title: "FlowSchemas", Singular: "FlowSchema",
		Group: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas"}
)

// cluster holds the two kinds and the names that exist now.
type cluster struct{ existing map[string]bool }

func (cluster) Statuses() []kube.KindStatus {
	return []kube.KindStatus{{Kind: csrKind, State: kube.StateSynced}, {Kind: fsKind, State: kube.StateSynced}}
}

func (c cluster) Meta(id kube.KindID, name string) (metav1.Object, error) {
	if c.existing[string(id)+"/"+name] {
		return &metav1.ObjectMeta{Name: name}, nil
	}
	return nil, errors.New("not found")
}

// testKindOf is the route's :kind among the test cluster's kinds, as the
// handlers' kind registry answers it; 404 for any other.
func testKindOf(c echo.Context) (kube.Kind, error) {
	for _, st := range (cluster{}).Statuses() {
		if string(st.Kind.ID) == c.Param("kind") {
			return st.Kind, nil
		}
	}
	return kube.Kind{}, echo.NewHTTPError(http.StatusNotFound, "no such kind")
}

// newServer is the ledger's routes on echo with the kind check the console
// puts in front of :kind routes; mayList says which kinds the viewer may list.
func newServer(t *testing.T, store ledger.Store, mayList func(kube.Kind) bool) *echo.Echo {
	t.Helper()
	if mayList == nil {
		mayList = func(kube.Kind) bool { return true }
	}
	h := New(Deps{
		Base: page.Base{Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Chrome: func(_ echo.Context, title string, _ kube.KindID, crumbs ...model.Crumb) model.Chrome {
				return model.Chrome{Title: title, Breadcrumbs: append([]model.Crumb{{Label: "Home", Href: "/"}}, crumbs...)}
			}},
		Cluster: cluster{existing: map[string]bool{"flowschemas/exempt": true}}, Store: store,
		MayList: func(_ echo.Context, k kube.Kind) bool { return mayList(k) }, Kind: testKindOf,
	})
	e := echo.New()
	ofKind := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			k, err := testKindOf(c)
			if err != nil {
				return err
			}
			if !mayList(k) {
				return echo.NewHTTPError(http.StatusForbidden, "may not list")
			}
			return next(c)
		}
	}
	h.Register(e, ofKind)
	return e
}

func get(t *testing.T, e *echo.Echo, target string) (*httptest.ResponseRecorder, *goquery.Document) {
	t.Helper()
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatal(err)
	}
	return rec, doc
}

func tid(id string) string { return `[data-testid="` + id + `"]` }

var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// filled is a ledger with a CSR's deleted story, a storm of one user's
// FlowSchema updates, and a write the console made by impersonation.
func filled(t *testing.T, storm int) *memStore {
	t.Helper()
	s := &memStore{retention: 400 * 24 * time.Hour}
	s.csr = testfixtures.LedgerCSRStory(t, "alice-laptop", "example.com/client", "alice", "bob", 3, t0)
	s.entries = append(s.entries, s.csr.Entries...)
	for i := range storm {
		s.entries = append(s.entries, ledger.Entry{Source: ledger.SourceAPIServer, ID: fmt.Sprintf("storm-%d", i),
			Time: t0.Add(2*time.Hour + time.Duration(i)*time.Second), User: "storm-bot", Verb: "patch",
			Action: ledger.ActionUpdate, Resource: "flowschemas", Kind: "flowschemas", Name: "exempt", Code: 200, Result: ledger.ResultOK})
	}
	s.entries = append(s.entries, ledger.Entry{Source: ledger.SourceConsole, ID: "console-1", Time: t0.Add(3 * time.Hour),
		User: "carol", Impersonator: "system:serviceaccount:clusterdesk:clusterdesk", Verb: "update", Action: ledger.ActionUpdate,
		Resource: "flowschemas", Kind: "flowschemas", Name: "exempt", Code: 403, Result: ledger.ResultDenied,
		Reason: "flowschemas.flowcontrol.apiserver.k8s.io \"exempt\" is forbidden", Diff: "--- a\n+++ b\n@@ -1 +1 @@\n-a: 1\n+a: 2\n"})
	return s
}

func TestLedgerPageNewestFirstWithHeaderAndRows(t *testing.T) {
	s := filled(t, 3)
	rec, doc := get(t, newServer(t, s, nil), urls.Ledger)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	about := doc.Find(tid("ledger-about")).Text()
	for _, want := range []string{"SQLite (embedded)", "8 entries", "2026-11-01 09:00:00 UTC", "kept 400 days"} {
		if !strings.Contains(about, want) {
			t.Errorf("header %q lacks %q", about, want)
		}
	}
	rows := doc.Find(tid("ledger-row"))
	if rows.Length() != 8 {
		t.Fatalf("%d rows", rows.Length())
	}
	first := rows.First()
	if got := first.Find(tid("ledger-via")).Text(); got != "via system:serviceaccount:clusterdesk:clusterdesk" {
		t.Errorf("the newest row (the console's impersonated write) says %q", got)
	}
	if got := strings.Join(strings.Fields(first.Find(tid("ledger-result-cell")).Text()), " "); got != "denied 403" {
		t.Errorf("result %q", got)
	}
	if href, _ := first.Find(tid("ledger-history-link")).Attr("href"); href != urls.LedgerObject("flowschemas", "exempt", "") {
		t.Errorf("object link %q", href)
	}
	if href, _ := first.Find(tid("ledger-user-link")).Attr("href"); href != urls.LedgerUser("carol") {
		t.Errorf("user link %q", href)
	}
	approve := rows.Filter(`[data-action="approve"]`)
	if href, _ := approve.Find(tid("ledger-signer-link")).Attr("href"); href != urls.LedgerSigner("example.com/client") {
		t.Errorf("signer link %q", href)
	}
	if !strings.Contains(approve.Find(tid("ledger-reason")).Text(), "OPS-42") {
		t.Errorf("the approval's reason is not shown")
	}
	if doc.Find(`form[method="post"]:not([action="/logout"]), button[formmethod="post"]`).Length() != 0 {
		t.Errorf("the ledger page offers a write")
	}
}

// TestLedgerPagesWithTheCursor: keyset pages, each a Query with the cursor
// the last returned, until the store says there is no next.
func TestLedgerPagesWithTheCursor(t *testing.T) {
	s := filled(t, 120)
	e := newServer(t, s, nil)
	seen := map[string]bool{}
	target := urls.Ledger + "?user=storm-bot"
	for pages := 0; target != ""; pages++ {
		if pages > 5 {
			t.Fatal("the pager does not end")
		}
		rec, doc := get(t, e, target)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d", target, rec.Code)
		}
		if h := doc.Find(tid("page-title")).Text(); h != "What storm-bot did" {
			t.Fatalf("heading %q", h)
		}
		doc.Find(tid("ledger-row") + " time").Each(func(_ int, tm *goquery.Selection) {
			at, _ := tm.Attr("datetime")
			if seen[at] {
				t.Errorf("%s shown twice", at)
			}
			seen[at] = true
		})
		if pages > 0 && doc.Find(tid("ledger-first")).Length() != 1 {
			t.Errorf("page %d has no link to the first", pages)
		}
		target, _ = doc.Find(tid("ledger-next")).Attr("href")
		if target != "" {
			u, _ := url.Parse(target)
			if u.Query().Get("user") != "storm-bot" || u.Query().Get("after") == "" {
				t.Fatalf("next %q loses the filter or the cursor", target)
			}
		}
	}
	if len(seen) != 120 {
		t.Fatalf("%d distinct rows over the pages, want 120", len(seen))
	}
	for _, q := range s.queries {
		if q.Limit != 0 && q.Limit > ledger.MaxLimit {
			t.Errorf("limit %d", q.Limit)
		}
	}
}

func TestLedgerPagePerSignerAndFilters(t *testing.T) {
	s := filled(t, 2)
	e := newServer(t, s, nil)
	_, doc := get(t, e, urls.LedgerSigner("example.com/client")+"&action=approve&action=deny&result=ok&source=apiserver&since=2026-10-01&until=2026-11-15")
	if h := doc.Find(tid("page-title")).Text(); h != "Decisions for signer example.com/client" {
		t.Fatalf("heading %q", h)
	}
	if n := doc.Find(tid("ledger-row")).Length(); n != 1 {
		t.Fatalf("%d rows, want the approval", n)
	}
	q := s.queries[len(s.queries)-1]
	if q.Signer != "example.com/client" || !slices.Equal(q.Actions, []string{"approve", "deny"}) || q.Result != "ok" ||
		q.Source != "apiserver" || q.Since.IsZero() || q.Until.IsZero() {
		t.Fatalf("query %+v", q)
	}
	if v, _ := doc.Find(tid("ledger-action-approve")).Attr("checked"); v != "" && doc.Find(tid("ledger-action-approve")+"[checked]").Length() != 1 {
		t.Errorf("the form does not keep the ticked action")
	}
	csvHref, _ := doc.Find(tid("ledger-export-csv")).Attr("href")
	if u, _ := url.Parse(csvHref); u.Path != urls.LedgerCSV || u.Query().Get("signer") != "example.com/client" || len(u.Query()["action"]) != 2 {
		t.Errorf("the export %q does not carry the filter", csvHref)
	}
}

// TestLedgerOnlyShowsKindsTheViewerMayList: the store is asked for the
// listable kinds only, and a kind route the viewer may not list is refused.
func TestLedgerOnlyShowsKindsTheViewerMayList(t *testing.T) {
	s := filled(t, 2)
	e := newServer(t, s, func(k kube.Kind) bool { return k.ID == kube.CSRs })
	_, doc := get(t, e, urls.Ledger+"?kind=flowschemas&kind=csrs")
	if q := s.queries[len(s.queries)-1]; !slices.Equal(q.Kinds, []string{"csrs"}) {
		t.Fatalf("kinds %v", q.Kinds)
	}
	if doc.Find(tid("ledger-row")+`[data-kind="flowschemas"]`).Length() != 0 || doc.Find(tid("ledger-row")).Length() != 4 {
		t.Fatalf("rows of a kind the viewer may not list are shown")
	}
	if !strings.Contains(doc.Find(tid("ledger-hidden")).Text(), "FlowSchemas") {
		t.Errorf("the page does not say what it hides")
	}
	if rec, _ := get(t, e, urls.LedgerObject("flowschemas", "exempt", "")); rec.Code != http.StatusForbidden {
		t.Errorf("history of a kind not listable: %d", rec.Code)
	}
	rec, _ := get(t, e, urls.LedgerNDJSON)
	if strings.Contains(rec.Body.String(), `"kind":"flowschemas"`) {
		t.Errorf("the export holds a kind the viewer may not list")
	}

	none := &memStore{entries: s.entries}
	e = newServer(t, none, func(kube.Kind) bool { return false })
	_, doc = get(t, e, urls.Ledger)
	if len(none.queries) != 0 || doc.Find(tid("ledger-empty")).Length() != 1 {
		t.Errorf("a viewer who may list no kind: %d queries", len(none.queries))
	}
}

func TestHistoryOfADeletedCSR(t *testing.T) {
	s := filled(t, 0)
	rec, doc := get(t, newServer(t, s, nil), urls.LedgerObject("csrs", "alice-laptop", ""))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if doc.Find(tid("ledger-gone")).Length() != 1 || doc.Find(tid("ledger-current-object")).Length() != 0 {
		t.Errorf("the page does not say the request is gone")
	}
	var actions []string
	doc.Find(tid("ledger-step")).Each(func(_ int, s *goquery.Selection) {
		a, _ := s.Attr("data-action")
		actions = append(actions, a)
	})
	if !slices.Equal(actions, []string{"create", "approve", "issue", "delete"}) {
		t.Fatalf("steps %v, want oldest first", actions)
	}
	req := doc.Find(tid("ledger-csr-request")).Text()
	for _, want := range []string{"CN=alice", "host-000.alice-laptop.example.com", "ECDSA P-256", "client auth", "example.com/client"} {
		if !strings.Contains(req, want) {
			t.Errorf("request panel lacks %q: %s", want, strings.Join(strings.Fields(req), " "))
		}
	}
	dec := doc.Find(tid("ledger-csr-decision"))
	if !strings.Contains(dec.Text(), "bob") || !strings.Contains(dec.Find(tid("ledger-csr-reason")).Text(), "OPS-42") {
		t.Errorf("decision %q", strings.Join(strings.Fields(dec.Text()), " "))
	}
	if serial := doc.Find(tid("ledger-csr-serial")).Text(); serial != s.csr.Serial {
		t.Errorf("serial %q, want %q", serial, s.csr.Serial)
	}
	if got := doc.Find(tid("ledger-csr-not-before")).Text(); got != "2026-11-01 09:02:00 UTC" {
		t.Errorf("not before %q", got)
	}
	if got := doc.Find(tid("ledger-csr-not-after")).Text(); got != "2026-11-02 09:02:00 UTC" {
		t.Errorf("not after %q", got)
	}
	q := s.queries[0]
	if !q.Oldest || q.Kind != "csrs" || q.Name != "alice-laptop" || !slices.Equal(q.Kinds, []string{"csrs"}) {
		t.Errorf("history query %+v", q)
	}
}

func TestHistoryShowsTheConsolesDiffAndTheCurrentObject(t *testing.T) {
	_, doc := get(t, newServer(t, filled(t, 1), nil), urls.LedgerObject("flowschemas", "exempt", ""))
	if doc.Find(tid("ledger-current-object")).Length() != 1 || doc.Find(tid("ledger-gone")).Length() != 0 {
		t.Errorf("an existing object's history does not link it")
	}
	if doc.Find(tid("ledger-step-diff")).Length() != 1 {
		t.Errorf("the console's diff is not shown")
	}
	if doc.Find(tid("ledger-csr-request")).Length() != 0 {
		t.Errorf("a FlowSchema has no CSR story")
	}
}

func TestHistoryOfANameUsedTwice(t *testing.T) {
	s := &memStore{}
	for i, uid := range []string{"uid-1", "uid-2"} {
		s.entries = append(s.entries, ledger.Entry{Source: ledger.SourceAPIServer, ID: uid, Time: t0.Add(time.Duration(i) * time.Hour),
			User: "u", Action: ledger.ActionCreate, Kind: "flowschemas", Name: "again", UID: uid, Result: ledger.ResultOK})
	}
	e := newServer(t, s, nil)
	_, doc := get(t, e, urls.LedgerObject("flowschemas", "again", ""))
	if n := doc.Find(tid("ledger-uids") + " a").Length(); n != 2 {
		t.Fatalf("%d incarnation links", n)
	}
	_, doc = get(t, e, urls.LedgerObject("flowschemas", "again", "uid-2"))
	if n := doc.Find(tid("ledger-step")).Length(); n != 1 || doc.Find(tid("ledger-uid")).Text() != "uid-2" {
		t.Fatalf("one incarnation: %d steps", n)
	}
}

func TestLedgerWithoutAStoreSaysHowToTurnItOn(t *testing.T) {
	e := newServer(t, nil, nil)
	for _, target := range []string{urls.Ledger, urls.LedgerObject("csrs", "x", "")} {
		rec, doc := get(t, e, target)
		if rec.Code != http.StatusOK || !strings.Contains(doc.Find(tid("ledger-off")).Text(), "--ledger") {
			t.Errorf("%s: %d, %q", target, rec.Code, doc.Find(tid("ledger-off")).Text())
		}
	}
	if rec, _ := get(t, e, urls.LedgerCSV); rec.Code != http.StatusNotFound {
		t.Errorf("export without a ledger: %d", rec.Code)
	}
}

func TestUnreachableDatabaseIsSaidOnThePage(t *testing.T) {
	s := filled(t, 0)
	s.pingErr = errors.New("dial tcp 10.0.0.9:5432: connect: connection refused")
	e := newServer(t, s, nil)
	for _, target := range []string{urls.Ledger, urls.LedgerObject("csrs", "alice-laptop", "")} {
		rec, doc := get(t, e, target)
		if rec.Code != http.StatusOK {
			t.Errorf("%s: %d", target, rec.Code)
		}
		if !strings.Contains(doc.Find(tid("ledger-unreachable")).Text(), "connection refused") {
			t.Errorf("%s does not say the database is unreachable", target)
		}
		if doc.Find(tid("ledger-row")+","+tid("ledger-step")).Length() != 0 {
			t.Errorf("%s shows rows", target)
		}
	}
	if rec, _ := get(t, e, urls.LedgerCSV); rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "connection refused") {
		t.Errorf("export: %d %s", rec.Code, rec.Body)
	}

	s = filled(t, 0)
	s.queryErr = errors.New("database is locked")
	_, doc := get(t, newServer(t, s, nil), urls.Ledger)
	if !strings.Contains(doc.Find(tid("ledger-unreachable")).Text(), "database is locked") {
		t.Errorf("a failing query is not said")
	}
}

// TestHostileInputIsA400: never a 500, never a query.
func TestHostileInputIsA400(t *testing.T) {
	s := filled(t, 0)
	e := newServer(t, s, nil)
	for _, target := range []string{
		urls.Ledger + "?after=forged", // the store refuses it
		urls.Ledger + "?after=%00%01",
		urls.Ledger + "?since=0001-01-01",
		urls.Ledger + "?until=99999d",
		urls.Ledger + "?user=" + strings.Repeat("x", 10000),
		urls.Ledger + "?action=truncate",
		urls.Ledger + "?housekeeping=hide",
		urls.LedgerCSV + "?housekeeping=all",
		urls.LedgerCSV + "?signer=" + strings.Repeat("s", 5000),
		urls.LedgerNDJSON + "?since=tomorrow",
		urls.LedgerObject("csrs", "alice-laptop", "") + "?after=forged",
		urls.LedgerObject("csrs", "alice-laptop", "") + "?uid=" + strings.Repeat("u", 500),
		urls.LedgerObject("csrs", "alice-laptop", "") + "?format=xlsx",
		urls.LedgerObject("csrs", strings.Repeat("n", 254), ""),
	} {
		rec, _ := get(t, e, target)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%.80s: %d, want 400", target, rec.Code)
		}
	}
	if rec, _ := get(t, e, urls.LedgerObject("nokind", "x", "")); rec.Code != http.StatusNotFound {
		t.Errorf("unknown kind: %d", rec.Code)
	}
}

// TestEveryRouteReads: nobody can edit or delete history through the
// console, whatever its mode.
func TestEveryRouteReads(t *testing.T) {
	e := newServer(t, filled(t, 0), nil)
	for _, r := range e.Routes() {
		if r.Method != http.MethodGet {
			t.Errorf("%s %s: the ledger's routes are GET only", r.Method, r.Path)
		}
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(m, urls.LedgerObject("csrs", "alice-laptop", ""), nil))
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d", m, rec.Code)
		}
	}
}

func TestExportsStreamEveryMatch(t *testing.T) {
	s := filled(t, 600) // more than a page: an export is not paged
	e := newServer(t, s, nil)
	rec, _ := get(t, e, urls.LedgerCSV+"?user=storm-bot")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get(echo.HeaderContentType), "text/csv") {
		t.Fatalf("%d %s", rec.Code, rec.Header().Get(echo.HeaderContentType))
	}
	if cd := rec.Header().Get(echo.HeaderContentDisposition); !strings.HasPrefix(cd, `attachment; filename="clusterdesk-ledger-`) || !strings.HasSuffix(cd, `.csv"`) {
		t.Errorf("disposition %q", cd)
	}
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil || len(rows) != 601 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}

	rec, _ = get(t, e, urls.LedgerObject("csrs", "alice-laptop", "")+"?format=ndjson")
	if ct := rec.Header().Get(echo.HeaderContentType); !strings.HasPrefix(ct, "application/x-ndjson") {
		t.Errorf("content type %q", ct)
	}
	var actions []string
	sc := bufio.NewScanner(rec.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r ledgerview.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		actions = append(actions, r.Action)
	}
	if !slices.Equal(actions, []string{"create", "approve", "issue", "delete"}) {
		t.Errorf("history export %v", actions)
	}

	s.exportErr = errors.New("connection reset")
	rec, _ = get(t, e, urls.LedgerNDJSON)
	lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], `"exportError"`) {
		t.Errorf("an export cut short must say so: %q", lines)
	}
}

// TestPageAtTenThousandEntries: a page costs its rows, not the ledger.
func TestPageAtTenThousandEntries(t *testing.T) {
	s := filled(t, 10000)
	e := newServer(t, s, nil)
	start := time.Now()
	rec, doc := get(t, e, urls.Ledger)
	if rec.Code != http.StatusOK || doc.Find(tid("ledger-row")).Length() != ledger.DefaultLimit {
		t.Fatalf("%d, %d rows", rec.Code, doc.Find(tid("ledger-row")).Length())
	}
	if len(rec.Body.Bytes()) > 200<<10 {
		t.Errorf("a page of %d bytes", len(rec.Body.Bytes()))
	}
	t.Logf("page of 10,000 entries (in memory): %v, %d bytes", time.Since(start), len(rec.Body.Bytes()))
}

// countingStore counts the Stats it is asked.
type countingStore struct {
	*memStore
	stats int
}

func (c *countingStore) Stats(ctx context.Context) (ledger.Stats, error) {
	c.stats++
	return c.memStore.Stats(ctx)
}

func TestStatsAreReusedForAFewSeconds(t *testing.T) {
	c := &countingStore{memStore: filled(t, 0)}
	var m statsMemo
	now := time.Now()
	for _, at := range []time.Duration{0, time.Second, statsFor - time.Millisecond} {
		if _, err := m.get(context.Background(), c, now.Add(at)); err != nil {
			t.Fatal(err)
		}
	}
	if c.stats != 1 {
		t.Fatalf("%d Stats within %v", c.stats, statsFor)
	}
	if _, err := m.get(context.Background(), c, now.Add(statsFor)); err != nil || c.stats != 2 {
		t.Fatalf("after %v: %d Stats, %v", statsFor, c.stats, err)
	}
}
