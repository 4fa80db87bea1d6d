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

func (downLedger) Ping(context.Context) error {
	return errors.New("dial tcp 10.0.0.9:5432: connect: connection refused")
}

type upLedger struct{ ledger.Store }

func (upLedger) Ping(context.Context) error { return nil }

// An unreachable ledger leaves the replica ready (writes need only the API
// server; replicas share the database, and its outage must not take all of
// them out of the Service) and /readyz says why.
func TestReadyzReportsTheLedgerWithoutFailing(t *testing.T) {
	for _, tc := range []struct {
		store ledger.Store
		want  string
	}{
		{nil, ""},
		{upLedger{}, "ledger: ok"},
		{downLedger{}, "ledger: unreachable (dial tcp 10.0.0.9:5432: connect: connection refused)"},
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
		if time.Since(start) > 2*ledgerPingTimeout {
			t.Errorf("ledger %T: the probe took %v", tc.store, time.Since(start))
		}
	}
}
