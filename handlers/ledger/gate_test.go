package ledger

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// reviews answers access reviews by the identity the request carries, as
// kube.Access does for the console: every user may list every kind (a
// viewer); only the users in grant may get clusterdesk.io/ledger. A user
// in failing has the API server fail to answer. It counts the ledger
// questions, so a test can tell the gate asked.
type reviews struct {
	grant, failing map[string]bool
	ledgerAsked    atomic.Int64
}

func (r *reviews) Can(ctx context.Context, verb, group, resource, subresource, name string) (bool, error) {
	id, _ := kube.IdentityFrom(ctx)
	if group == page.LedgerGrantGroup && resource == page.LedgerGrantResource {
		r.ledgerAsked.Add(1)
		if r.failing[id.User] {
			return false, errors.New("the API server is unreachable")
		}
		return verb == page.LedgerGrantVerb && subresource == "" && name == "" && r.grant[id.User], nil
	}
	return verb == "list", nil
}

// readCounter is the ledger, counting every read of its entries.
type readCounter struct {
	*memStore
	reads atomic.Int64
}

func (s *readCounter) Query(ctx context.Context, q ledger.Query) (ledger.Page, error) {
	s.reads.Add(1)
	return s.memStore.Query(ctx, q)
}

func (s *readCounter) Export(ctx context.Context, q ledger.Query, each func(ledger.Entry) error) error {
	s.reads.Add(1)
	return s.memStore.Export(ctx, q, each)
}

func (s *readCounter) PolicyVersions(context.Context, string, int) (ledger.PolicyVersions, error) {
	s.reads.Add(1)
	return ledger.PolicyVersions{}, nil
}

// gatedServer is the ledger's routes as the console wires them: the gate is
// page.Rights' (the real one) over reviews, and each request is the user
// its X-Test-User header names, put in the context as requireIdentity
// puts the signed-in person's (the header is this test's stand-in for a
// session; the gate itself never reads the request).
func gatedServer(t *testing.T, store ledger.Store, access *reviews, readers page.LedgerReaders) (*echo.Echo, *Handlers) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rights := page.Rights{Access: access, Log: log, LedgerReaders: readers}
	mayList := func(c echo.Context, k kube.Kind) bool {
		ok, _ := access.Can(c.Request().Context(), "list", k.Group, k.Resource, "", "")
		return ok
	}
	h := New(Deps{
		Base: page.Base{Log: log, Chrome: func(_ echo.Context, title string, _ kube.KindID, crumbs ...model.Crumb) model.Chrome {
			return model.Chrome{Title: title, Breadcrumbs: crumbs}
		}},
		Cluster: cluster{existing: map[string]bool{}}, Store: store, MayList: mayList, Kind: testKindOf,
		Refusal: rights.LedgerRefusal,
	})
	e := echo.New()
	e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			c.SetRequest(r.WithContext(kube.WithIdentity(r.Context(), kube.Identity{User: r.Header.Get("X-Test-User"), Act: kube.ActWithToken})))
			return next(c)
		}
	})
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		p := page.ErrorPage(err) // the console's error page's words and status
		_ = c.String(p.Status, p.Message)
	}
	ofKind := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			k, err := testKindOf(c)
			if err != nil {
				return err
			}
			if !mayList(c, k) {
				return echo.NewHTTPError(http.StatusForbidden, "may not list")
			}
			return next(c)
		}
	}
	h.Register(e, ofKind)
	return e, h
}

// ledgerRoutes are every route that reads ledger entries: the page (and
// its per-user and per-signer views), both exports, an object's history
// and its exports.
var ledgerRoutes = []string{
	urls.Ledger,
	urls.LedgerUser("alice"),
	urls.LedgerSigner("example.com/client"),
	urls.LedgerCSV,
	urls.LedgerNDJSON,
	urls.LedgerObject(kube.CSRs, "alice-laptop", ""),
	urls.LedgerObject(kube.CSRs, "alice-laptop", "") + "?format=csv",
	urls.LedgerObject(kube.CSRs, "alice-laptop", "") + "?format=ndjson",
	urls.LedgerObject(kube.FlowSchemas, "exempt", ""),
}

func asUser(t *testing.T, e *echo.Echo, user, target string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("X-Test-User", user)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

// TestLedgerGateRefusesViewers performs the attack of issue 48: a viewer,
// who may list every kind, reads who did what through every ledger route,
// exports and object history included. With --ledger-readers granted each
// answers 403 with the missing grant named and the store is never read;
// the auditor (granted get on clusterdesk.io/ledger) reads them all; a
// failed access review refuses, never a 500.
func TestLedgerGateRefusesViewers(t *testing.T) {
	store := &readCounter{memStore: filled(t, 2)}
	access := &reviews{grant: map[string]bool{"frank": true}, failing: map[string]bool{"mallory": true}}
	e, _ := gatedServer(t, store, access, page.LedgerReadersGranted)

	for _, target := range ledgerRoutes {
		before := store.reads.Load()
		rec := asUser(t, e, "erin", target)
		if rec.Code != http.StatusForbidden {
			t.Errorf("the viewer on %s: %d, want 403: %.300s", target, rec.Code, rec.Body)
		}
		for _, want := range []string{`"get"`, `"ledger"`, `"clusterdesk.io"`} {
			if !strings.Contains(rec.Body.String(), want) {
				t.Errorf("the viewer's 403 on %s does not name %s: %.300s", target, want, rec.Body)
			}
		}
		if strings.Contains(rec.Body.String(), "alice") || strings.Contains(rec.Body.String(), "storm-bot") {
			t.Errorf("the viewer's 403 on %s tells who did what: %.300s", target, rec.Body)
		}
		if n := store.reads.Load() - before; n != 0 {
			t.Errorf("the viewer on %s: the ledger was read %d times", target, n)
		}

		rec = asUser(t, e, "mallory", target)
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "could not be asked") {
			t.Errorf("a failed review on %s: %d, want 403 saying it could not ask: %.300s", target, rec.Code, rec.Body)
		}

		before = store.reads.Load()
		rec = asUser(t, e, "frank", target)
		if rec.Code != http.StatusOK {
			t.Errorf("the auditor on %s: %d, want 200: %.300s", target, rec.Code, rec.Body)
		}
		if n := store.reads.Load() - before; n == 0 {
			t.Errorf("the auditor on %s: the ledger was not read", target)
		}
	}
	if !strings.Contains(asUser(t, e, "frank", urls.LedgerObject(kube.CSRs, "alice-laptop", "")).Body.String(), "alice") {
		t.Error("the auditor's history of the CSR does not name its requester")
	}
	if access.ledgerAsked.Load() == 0 {
		t.Error("the gate never asked the API server")
	}
}

// TestLedgerGateListersIsTodays: without the gate (the binary's default)
// the viewer reads the ledger of the kinds they may list, as before: the
// flag, not the code path, decides.
func TestLedgerGateListersIsTodays(t *testing.T) {
	store := &readCounter{memStore: filled(t, 2)}
	access := &reviews{}
	e, _ := gatedServer(t, store, access, page.LedgerReadersListers)
	for _, target := range ledgerRoutes {
		if rec := asUser(t, e, "erin", target); rec.Code != http.StatusOK {
			t.Errorf("the viewer on %s without the gate: %d, want 200", target, rec.Code)
		}
	}
	if n := access.ledgerAsked.Load(); n != 0 {
		t.Errorf("listers asked for the ledger grant %d times", n)
	}
}

// TestLedgerGatePolicyVersions: a CSR approval policy's page embeds what
// each version decided; for a user without the grant the section says
// which grant is missing and holds no decision, and the ledger is not read.
func TestLedgerGatePolicyVersions(t *testing.T) {
	store := &readCounter{memStore: filled(t, 0)}
	access := &reviews{grant: map[string]bool{"frank": true}}
	_, h := gatedServer(t, store, access, page.LedgerReadersGranted)
	section := func(user string) model.Section {
		req := httptest.NewRequest(http.MethodGet, "/csrapprovalpolicies/p", nil)
		req = req.WithContext(kube.WithIdentity(req.Context(), kube.Identity{User: user, Act: kube.ActWithToken}))
		c := echo.New().NewContext(req, httptest.NewRecorder())
		var p model.DetailPage
		h.AddPolicyVersions(c, "p", &p)
		for _, s := range p.Sections {
			if s.TestID == present.PolicyVersionsTestID {
				return s
			}
		}
		t.Fatalf("%s: no policy versions section", user)
		return model.Section{}
	}
	s := section("erin")
	if len(s.Fields) != 1 || !strings.Contains(s.Fields[0].Value, `"clusterdesk.io"`) || store.reads.Load() != 0 {
		t.Errorf("the viewer's section: %+v, %d reads; want the missing grant named and no read", s.Fields, store.reads.Load())
	}
	section("frank")
	if store.reads.Load() != 1 {
		t.Errorf("the auditor's section read the ledger %d times, want 1", store.reads.Load())
	}
}
