//go:build integration

package health

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// A real PostgreSQL ledger that stops answering: pgx's error names the
// database's user, database and host (here its socket directory); the
// public /readyz says only that the ledger is unreachable.
func TestReadyzHidesThePostgresError(t *testing.T) {
	store, dsn, stopPostgres := testfixtures.PostgresLedger(t)
	if err := stopPostgres(); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{"user=" + u.User.Username(), strings.TrimPrefix(u.Path, "/"), u.Query().Get("host")}
	// The pool's first ping finds its connection dead ("bad connection");
	// the next dials, and the driver's error then names them all.
	var pingErr error
	for range 3 {
		if pingErr = store.Ping(context.Background()); pingErr != nil && strings.Contains(pingErr.Error(), secrets[0]) {
			break
		}
	}
	for _, s := range secrets {
		if pingErr == nil || !strings.Contains(pingErr.Error(), s) {
			t.Fatalf("the driver's error does not name %q, so this test proves nothing: %v", s, pingErr)
		}
	}
	e := echo.New()
	New(Deps{Cluster: syncedCluster{}, Ledger: store}).Register(e)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, "ledger: unreachable") {
		t.Errorf("/readyz: %d %q, want 200 saying the ledger is unreachable", rec.Code, body)
	}
	for _, s := range secrets {
		if strings.Contains(body, s) {
			t.Errorf("/readyz names %q: %q", s, body)
		}
	}
}
