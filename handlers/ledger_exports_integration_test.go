//go:build integration

package handlers

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
	"github.com/clusterdesk/clusterdesk/internal/testpg"
)

// The attack of issue 43 (class 3) on the console as it serves the
// devcluster's auditor, over real TCP, on both backends: exports of one
// signed-in user that never read (testfixtures.StalledExportsAttack) leave
// the ledger page, /readyz and the webhook's Append answering, and those
// that ran are cut off once a write has waited Stall.
func TestStalledLedgerExportsOnTheDevcluster(t *testing.T) {
	pgDSN := testpg.Database(t)
	cache, cfg := sharedCache(t, testcluster.Auditor), testcluster.RestConfig(t, testcluster.Auditor)
	for _, backend := range []struct{ name, dsn string }{
		{"sqlite", "sqlite:" + filepath.Join(t.TempDir(), "ledger.db")},
		{"postgres", pgDSN},
	} {
		t.Run(backend.name, func(t *testing.T) {
			store, err := ledger.Open(context.Background(), backend.dsn, ledger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			testfixtures.FillForStall(t, store)
			ls := newLiveServerOn(t, cache, cfg, testcluster.Auditor, true, func(d *Deps) {
				d.Ledger = store
				d.LedgerExports = LedgerExportLimits{Stall: 2 * time.Second}
			})
			sess := ls.login(t)
			srv := httptest.NewUnstartedServer(ls.e)
			var closed sync.Map // the clients' addresses whose connection the server closed
			srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
				if st == http.StateClosed {
					closed.Store(c.RemoteAddr().String(), true)
				}
			}
			srv.Start()
			t.Cleanup(srv.Close)
			testfixtures.StalledExportsAttack(t, srv.URL, sess.Name+"="+sess.Value, 2, store,
				func(addr string) bool { _, ok := closed.Load(addr); return ok })
		})
	}
}
