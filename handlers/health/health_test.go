package health

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// syncedCluster is a cluster whose every kind is synced; the probes call
// nothing else of it.
type syncedCluster struct{ ports.Cluster }

func (syncedCluster) Statuses() []kube.KindStatus { return nil }
func (syncedCluster) Ready() bool                 { return true }

// downLedger is a ledger whose database does not answer; the probe only pings.
type downLedger struct{ ledger.Store }

// downErr is what pgx says of a server that does not answer: the
// database's user, name, host and port, none of which /readyz may say.
var downErr = errors.New("ledger: postgres: failed to connect to `user=ledger_rw database=clusterdesk`: " +
	"10.0.0.9:5432 (pg.internal.example): dial error: dial tcp 10.0.0.9:5432: connect: connection refused")

func (downLedger) Ping(context.Context) error { return downErr }

type upLedger struct{ ledger.Store }

func (upLedger) Ping(context.Context) error { return nil }

// An unreachable ledger leaves the replica ready (writes need only the API
// server; replicas share the database, and its outage must not take all of
// them out of the Service) and /readyz says so, and never the driver's error
// (a public route: it names the database's user, host and port).
func TestReadyzReportsTheLedgerWithoutFailing(t *testing.T) {
	for _, tc := range []struct {
		store ledger.Store
		want  string
	}{
		{nil, ""},
		{upLedger{}, "ledger: ok"},
		{downLedger{}, "ledger: unreachable;"},
	} {
		e := echo.New()
		New(Deps{Cluster: syncedCluster{}, Ledger: tc.store}).Register(e)
		rec := httptest.NewRecorder()
		start := time.Now()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		body := rec.Body.String()
		if rec.Code != http.StatusOK || (tc.want != "" && !strings.Contains(body, tc.want)) || (tc.want == "" && strings.Contains(body, "ledger")) {
			t.Errorf("ledger %T: %d %q, want 200 with %q", tc.store, rec.Code, body, tc.want)
		}
		for _, secret := range []string{"ledger_rw", "clusterdesk", "10.0.0.9", "5432", "pg.internal", "dial"} {
			if strings.Contains(body, secret) {
				t.Errorf("ledger %T: /readyz says %q", tc.store, secret)
			}
		}
		if time.Since(start) > 2*ledgerPingTimeout {
			t.Errorf("ledger %T: the probe took %v", tc.store, time.Since(start))
		}
	}
}
