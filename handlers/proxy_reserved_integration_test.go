//go:build integration

package handlers

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// lockedBuffer is a log sink the test reads while the console writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// newProxyConsole is the console in proxy mode on the devcluster, acting as
// admin and impersonating whom the proxy p names (deploy/proxy's setup), its
// log in the returned buffer.
func newProxyConsole(t *testing.T, p *auth.Proxy) (http.Handler, *lockedBuffer) {
	t.Helper()
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	cache := syncedCache(t, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	users := strictUsers(t, cfg)
	gate := &auth.Gate{Mode: auth.ModeProxy, Proxy: p}
	if err := gate.Check(); err != nil {
		t.Fatal(err)
	}
	return newConsole(t, Deps{Log: log, Cluster: cache, Gate: gate, User: "admin"}, perUserClients(users)).e, logs
}

// proxyRequest is a request through the trusted proxy (on loopback, with the
// secret) naming user and, one header line each, groups.
func proxyRequest(path, user string, groupLines ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set(auth.DefaultProxySecretHeader, itProxySecret)
	r.Header.Set("X-Forwarded-User", user)
	for _, g := range groupLines {
		r.Header.Add("X-Forwarded-Groups", g)
	}
	return r
}

func serve(t *testing.T, h http.Handler, r *http.Request) (int, *goquery.Document) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, doc
}

// The attack on deploy/proxy (no prefix): anyone who can name a group in the
// identity provider names it so that the console impersonates system:masters
// (cluster-admin), hidden in a comma-joined value or in a header line of its
// own, or is the user system:admin. Each request is refused with a 403 that
// names the value, the console logs it, and no FlowSchema (cluster-admin
// content for this user, which the old code listed) is shown.
func TestProxyCannotImpersonateSystemNames(t *testing.T) {
	h, logs := newProxyConsole(t, &auth.Proxy{UserHeader: "X-Forwarded-User", GroupsHeader: "X-Forwarded-Groups",
		SecretHeader: auth.DefaultProxySecretHeader, Secret: []byte(itProxySecret)})
	attacker := uniq("it-proxy-attacker")
	for _, tc := range []struct {
		name  string
		req   *http.Request
		named string
	}{
		{"comma-joined group", proxyRequest("/flowschemas", attacker, "team,system:masters"), `"system:masters"`},
		{"group on a header line of its own", proxyRequest("/flowschemas", attacker, "team", "system:masters"), `"system:masters"`},
		{"system user", proxyRequest("/flowschemas", "system:admin", "team"), `"system:admin"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, doc := serve(t, h, tc.req)
			text := strings.Join(strings.Fields(doc.Text()), " ")
			if code != http.StatusForbidden || !strings.Contains(text, tc.named) || !strings.Contains(text, "belong to Kubernetes itself") {
				t.Errorf("status %d, page %.300q: want 403 naming %s", code, text, tc.named)
			}
			if rows := doc.Find(`[data-testid="list-row"]`).Length(); rows != 0 {
				t.Errorf("the page lists %d FlowSchemas: the proxy's name was honoured", rows)
			}
			if !strings.Contains(logs.String(), "proxy identity refused") || !strings.Contains(logs.String(), tc.named[1:len(tc.named)-1]) {
				t.Errorf("no log line names the refused %s: %s", tc.named, logs.String())
			}
		})
	}

	// The control: the same user without the system: name is asked about
	// (a SubjectAccessReview) and refused: what it is shown depends on
	// the API server's answer for the names sent, so above no
	// FlowSchema means system:masters was never put to it.
	if code, doc := serve(t, h, proxyRequest("/flowschemas", attacker, "team")); code != http.StatusForbidden || doc.Find(`[data-testid="banner-forbidden"]`).Length() != 1 {
		t.Fatalf("the control request: status %d, want 403 with the forbidden banner (the attacker may not list FlowSchemas)", code)
	}
}

// With --proxy-groups-prefix and --proxy-user-prefix (deploy/oauth2-proxy's
// oidc:) the same headers are accepted and harmless: the console impersonates
// oidc:system:masters, a group nothing is bound to, and the user still may
// not list FlowSchemas.
func TestProxyPrefixedSystemNamesGrantNothing(t *testing.T) {
	h, _ := newProxyConsole(t, &auth.Proxy{UserHeader: "X-Forwarded-User", GroupsHeader: "X-Forwarded-Groups",
		SecretHeader: auth.DefaultProxySecretHeader, Secret: []byte(itProxySecret), UserPrefix: "oidc:", GroupsPrefix: "oidc:"})
	user := uniq("it-proxy-prefixed")
	code, doc := serve(t, h, proxyRequest("/flowschemas", user, "team,system:masters"))
	if code != http.StatusForbidden || doc.Find(`[data-testid="banner-forbidden"]`).Length() != 1 || doc.Find(`[data-testid="list-row"]`).Length() != 0 {
		t.Fatalf("/flowschemas as oidc:%s in oidc:system:masters: status %d, want 403 with the forbidden banner and no rows", user, code)
	}
	// The user is oidc:<user>, as the page says.
	if got := strings.TrimSpace(doc.Find(`[data-testid="user"]`).Text()); got != "oidc:"+user {
		t.Errorf("acting as %q, want oidc:%s", got, user)
	}
}
