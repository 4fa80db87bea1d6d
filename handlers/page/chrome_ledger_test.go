package page

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// chromeCluster is a cluster with no kinds: the chrome's own entries only.
// Any other method panics (the embedded nil interface): Build needs none.
type chromeCluster struct{ ports.Cluster }

func (chromeCluster) Ready() bool                        { return true }
func (chromeCluster) ServerVersion() string              { return "v1.36.3" }
func (chromeCluster) Statuses() []kube.KindStatus        { return nil }
func (chromeCluster) Kind(kube.KindID) (kube.Kind, bool) { return kube.Kind{}, false }

// ledgerGrants answers the ledger's grant for the users it names, and no
// other review.
type ledgerGrants map[string]bool

func (g ledgerGrants) Can(ctx context.Context, verb, group, resource, _, _ string) (bool, error) {
	id, _ := kube.IdentityFrom(ctx)
	return verb == LedgerGrantVerb && group == LedgerGrantGroup && resource == LedgerGrantResource && g[id.User], nil
}

// TestChromeOffersTheLedgerOnlyToItsReaders: with --ledger-readers granted
// the nav's Ledger entry shows for a user the API server grants it and not
// for one it refuses (a link that could only answer 403); without the gate,
// for everyone, as before.
func TestChromeOffersTheLedgerOnlyToItsReaders(t *testing.T) {
	grants := ledgerGrants{"frank": true}
	for _, c := range []struct {
		readers LedgerReaders
		user    string
		want    bool
	}{
		{LedgerReadersGranted, "frank", true},
		{LedgerReadersGranted, "erin", false},
		{LedgerReadersListers, "erin", true},
	} {
		ch := &Chrome{
			Cluster: chromeCluster{},
			Rights:  Rights{Access: grants, Cluster: chromeCluster{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), LedgerReaders: c.readers},
			Flash:   Flash{Sessions: auth.NewSessions()},
			Live:    func(echo.Context, kube.KindID) model.Live { return model.Live{} },
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r = r.WithContext(kube.WithIdentity(r.Context(), kube.Identity{User: c.user, Act: kube.ActWithToken}))
		ctx := echo.New().NewContext(r, httptest.NewRecorder())
		got := false
		for _, item := range ch.Build(ctx, "Home", "").Nav {
			got = got || item.Label == "Ledger"
		}
		if got != c.want {
			t.Errorf("%s, %s: the nav offers the ledger: %v, want %v", c.readers, c.user, got, c.want)
		}
	}
}
