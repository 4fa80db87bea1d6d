package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// askedAs records who every access question was asked as (the identity the
// per-user clients would impersonate), and denies them all.
type askedAs struct {
	mu  sync.Mutex
	ids []kube.Identity
}

func (a *askedAs) Can(ctx context.Context, _, _, _, _, _ string) (bool, error) {
	id, _ := kube.IdentityFrom(ctx)
	a.mu.Lock()
	a.ids = append(a.ids, id)
	a.mu.Unlock()
	return false, nil
}

func (a *askedAs) asked(match func(kube.Identity) bool) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.ContainsFunc(a.ids, match)
}

// The proxy-mode attack at the handler: a system: name from the proxy (a
// comma-joined value, a header line of its own, the user) is answered 403
// with a page naming it, logged, and nothing is asked of the API server as
// that identity. The same request without the system: name is asked as the
// proxy's user, so the recorder would see one.
func TestProxySystemNamesRefusedWithAPage(t *testing.T) {
	ms := newModeServer(t, auth.ModeProxy, false)
	access := &askedAs{}
	logs := &strings.Builder{}
	e := newConsole(t, ms.deps, func(d *Deps) {
		d.Cluster, d.Access, d.Log = kindsOnlyCluster{}, access, slog.New(slog.NewTextHandler(logs, nil))
	}).e
	req := func(user string, groupLines ...string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/flowschemas", nil)
		r.RemoteAddr = proxyPeer
		r.Header.Set(auth.DefaultProxySecretHeader, proxySecret)
		r.Header.Set("X-Forwarded-User", user)
		for _, g := range groupLines {
			r.Header.Add("X-Forwarded-Groups", g)
		}
		return r
	}
	for _, tc := range []struct {
		name  string
		r     *http.Request
		named string
	}{
		{"comma-joined", req("eve", "team,system:masters"), "system:masters"},
		{"own header line", req("eve", "team", "system:masters"), "system:masters"},
		{"user", req("system:admin", "team"), "system:admin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, tc.r)
			doc, err := goquery.NewDocumentFromReader(rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			text := strings.Join(strings.Fields(doc.Text()), " ")
			if rec.Code != http.StatusForbidden || !strings.Contains(text, `"`+tc.named+`"`) || !strings.Contains(text, "belong to Kubernetes itself") {
				t.Errorf("status %d, page %.400q: want 403 naming %q", rec.Code, text, tc.named)
			}
			if !strings.Contains(logs.String(), "proxy identity refused") || !strings.Contains(logs.String(), "name="+tc.named) {
				t.Errorf("no log line names %s: %q", tc.named, logs.String())
			}
		})
	}
	if access.asked(func(id kube.Identity) bool {
		return id.User == "system:admin" || slices.Contains(id.Groups, "system:masters")
	}) {
		t.Fatalf("an access question was asked as a system: identity: %+v", access.ids)
	}
	// The control: without the system: name the same request is asked as eve.
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req("eve", "team"))
	if !access.asked(func(id kube.Identity) bool { return id.User == "eve" && slices.Equal(id.Groups, []string{"team"}) }) {
		t.Fatalf("eve in team was not asked about (status %d): the recorder sees nothing", rec.Code)
	}
}
