//go:build integration

package ledger

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/handlers/health"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
	"github.com/clusterdesk/clusterdesk/internal/testpg"
)

// The attack of issue 43 (class 3), on both backends, over real TCP
// (testfixtures.StalledExportsAttack): exports of one user that never read
// take nothing the ledger page, /readyz and the webhook's Append need, and
// those that ran are cut off once a write has waited Stall.
func TestStalledExportsTakeNothingAway(t *testing.T) {
	pg, err := testpg.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Stop() })
	pgDSN, err := pg.NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range []struct{ name, dsn string }{
		{"sqlite", "sqlite:" + t.TempDir() + "/ledger.db"},
		{"postgres", pgDSN},
	} {
		t.Run(backend.name, func(t *testing.T) {
			s, err := ledger.Open(context.Background(), backend.dsn, ledger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			testfixtures.FillForStall(t, s)
			stall := 2 * time.Second
			e := newServerWith(t, s, nil, func(d *Deps) { d.Exports = ExportLimits{Stall: stall} })
			health.New(health.Deps{Cluster: syncedHealth{}, Ledger: s}).Register(e)
			srv := httptest.NewUnstartedServer(e)
			var closed sync.Map // the clients' addresses whose connection the server closed
			srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
				if st == http.StateClosed {
					closed.Store(c.RemoteAddr().String(), true)
				}
			}
			srv.Start()
			t.Cleanup(srv.Close)
			testfixtures.StalledExportsAttack(t, srv.URL, "", DefaultExportLimits.PerUser, s, func(addr string) bool { _, ok := closed.Load(addr); return ok })
		})
	}
}

// syncedHealth is a cluster whose kinds are synced: /readyz then reports
// the ledger alone.
type syncedHealth struct{ ports.Cluster }

func (syncedHealth) Statuses() []kube.KindStatus { return nil }
func (syncedHealth) Ready() bool                 { return true }
