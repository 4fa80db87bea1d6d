package handlers

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
)

const (
	goodToken   = "good-bearer-token-for-tests"
	proxySecret = "0123456789abcdef-proxy-secret"
)

// reviewTokens stands in for the SelfSubjectReview: one token is valid.
func reviewTokens(_ context.Context, token string) (kube.Identity, error) {
	if token != goodToken {
		return kube.Identity{}, apierrors.NewUnauthorized("invalid bearer token")
	}
	return kube.Identity{User: "auditor", Groups: []string{"system:authenticated"}, Act: kube.ActWithToken, Token: token}, nil
}

// modeServer is the console's route table in one sign-in mode, with a way to
// make a request as a signed-in user.
type modeServer struct {
	*testServer
	deps Deps // what the server was built with
	mode auth.Mode
	sign func(r *http.Request) // adds the signed-in user's credentials
}

func newModeServer(t *testing.T, mode auth.Mode, readOnly bool) *modeServer {
	t.Helper()
	ts := &testServer{writer: &recordingWriter{}}
	sessions := auth.NewSessions()
	gate := &auth.Gate{Mode: mode, Sessions: sessions, LocalUser: "tester"}
	deps := Deps{
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Cluster: emptyCluster{}, Access: denyAll{},
		Writer: ts.writer, Sessions: sessions, User: "tester", ReadOnly: readOnly, Gate: gate,
		SignInLimit: routeTableSignInLimit,
	}
	switch mode {
	case auth.ModeLocal:
		deps.Logins = auth.NewLoginTokens(func(tok string) { ts.token = tok })
	case auth.ModeToken:
		deps.TokenReview = reviewTokens
	case auth.ModeProxy:
		gate.Sessions = nil
		gate.Proxy = &auth.Proxy{UserHeader: "X-Forwarded-User", GroupsHeader: "X-Forwarded-Groups",
			SecretHeader: auth.DefaultProxySecretHeader, Secret: []byte(proxySecret)}
	}
	if err := gate.Check(); err != nil {
		t.Fatal(err)
	}
	ts.build(t, deps)
	ms := &modeServer{testServer: ts, deps: deps, mode: mode}
	switch mode {
	case auth.ModeLocal:
		c := ts.login(t)
		ms.sign = func(r *http.Request) { r.AddCookie(c) }
	case auth.ModeToken:
		c := ms.tokenLogin(t, goodToken, http.StatusSeeOther)
		ms.sign = func(r *http.Request) { r.AddCookie(c) }
	case auth.ModeProxy:
		ms.sign = proxySign("alice@example.com")
	}
	return ms
}

// proxyPeer is the proxy's address as the console sees it: beside the console,
// on loopback (the secret is honoured only from there or over TLS).
const proxyPeer = "127.0.0.1:40000"

// proxySign signs a request as user, through the trusted proxy.
func proxySign(user string) func(*http.Request) {
	return func(r *http.Request) {
		r.RemoteAddr = proxyPeer
		r.Header.Set(auth.DefaultProxySecretHeader, proxySecret)
		r.Header.Set("X-Forwarded-User", user)
		r.Header.Set("X-Forwarded-Groups", "team-a")
	}
}

// otherSign signs a request as another session of the mode (proxy mode: another user).
func (ms *modeServer) otherSign(t *testing.T) func(*http.Request) {
	switch ms.mode {
	case auth.ModeLocal:
		return withCookie(ms.login(t))
	case auth.ModeToken:
		return withCookie(ms.tokenLogin(t, goodToken, http.StatusSeeOther))
	}
	return proxySign("bob@example.com")
}

// tokenLogin posts token to the sign-in form as the browser does (same
// origin, the form's pre-session token, so CSRF passes) and returns the
// session cookie when want is a redirect.
func (ms *modeServer) tokenLogin(t *testing.T, token string, want int) *http.Cookie {
	t.Helper()
	rec := ms.do(tokenSignInRequest(t, ms.e, token))
	if rec.Code != want {
		t.Fatalf("token sign-in: status %d, want %d", rec.Code, want)
	}
	if token != "" && (strings.Contains(rec.Body.String(), token) || strings.Contains(rec.Header().Get("Location"), token)) {
		t.Fatal("the token came back in the response")
	}
	for _, c := range rec.Result().Cookies() {
		if c.Name == auth.CookieName && c.Value != "" {
			if strings.Contains(c.Value, token) {
				t.Fatal("the token is readable in the cookie")
			}
			return c
		}
	}
	if want == http.StatusSeeOther {
		t.Fatal("token sign-in set no session cookie")
	}
	return nil
}

var allModes = []auth.Mode{auth.ModeLocal, auth.ModeToken, auth.ModeProxy}

func TestEveryModeRefusesUnauthenticatedRequests(t *testing.T) {
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			ms := newModeServer(t, mode, false)
			for _, rt := range ms.e.Routes() {
				path := concrete(rt.Path)
				if publicRoute(rt.Path) || rt.Method == echo.RouteNotFound {
					continue
				}
				rec := ms.do(httptest.NewRequest(rt.Method, path, nil))
				if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), `data-testid="login"`) {
					t.Errorf("%s %s: status %d, want 401 with the login page", rt.Method, rt.Path, rec.Code)
				}
				if mode == auth.ModeToken && !strings.Contains(rec.Body.String(), `data-testid="token-form"`) {
					t.Errorf("%s %s: token mode's login page has no token form", rt.Method, rt.Path)
				}
			}
			if ms.writer.calls != 0 {
				t.Fatal("a write happened without a session")
			}
		})
	}
}

func TestEveryModeChecksCSRFOnEveryPost(t *testing.T) {
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			ms := newModeServer(t, mode, false)
			own := pageCSRFToken(t, ms.e, ms.sign)
			other := pageCSRFToken(t, ms.e, ms.otherSign(t))
			if own == other {
				t.Fatal("two sessions got the same CSRF token")
			}
			for _, rt := range ms.e.Routes() {
				if rt.Method != http.MethodPost {
					continue
				}
				for _, f := range forgeries(own, other) {
					r := f.request(concrete(rt.Path), url.Values{"message": {"x"}, "token": {goodToken}}, ms.sign)
					if rec := ms.do(r); !refusedForCSRF(rec) {
						t.Errorf("%s, %s: status %d, want 403 from the CSRF check", rt.Path, f.name, rec.Code)
					}
				}
			}
			if ms.writer.calls != 0 {
				t.Fatal("a write happened without a CSRF token")
			}
		})
	}
}

func TestEveryModeRefusesWritesInReadOnly(t *testing.T) {
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			ms := newModeServer(t, mode, true)
			for _, rt := range ms.e.Routes() {
				// readPOSTRoutes change nothing (the simulator): they work in
				// read-only mode (TestInterceptPOST performs one).
				if rt.Method != http.MethodPost || rt.Path == "/logout" || rt.Path == "/login" || readPOSTRoutes[rt.Path] {
					continue
				}
				r := httptest.NewRequest(http.MethodPost, concrete(rt.Path), nil)
				r.Header.Set("Sec-Fetch-Site", "same-origin")
				r.Header.Set("X-CSRF-Token", pageCSRFToken(t, ms.e, ms.sign))
				ms.sign(r)
				rec := ms.do(r)
				if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "read-only") {
					t.Errorf("%s: status %d, want 403 naming read-only mode", rt.Path, rec.Code)
				}
			}
			if ms.writer.calls != 0 {
				t.Fatal("a write happened in read-only mode")
			}
		})
	}
}

// A signed-in request reaches the pages and acts as the mode's identity.
func TestEveryModeSignsIn(t *testing.T) {
	want := map[auth.Mode]string{auth.ModeLocal: "tester", auth.ModeToken: "auditor", auth.ModeProxy: "alice@example.com"}
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			ms := newModeServer(t, mode, false)
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			ms.sign(r)
			rec := ms.do(r)
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="user">`+want[mode]+`<`) {
				t.Fatalf("status %d; the page should name %s", rec.Code, want[mode])
			}
		})
	}
}

func TestTokenModeRefusesBadTokensAndForgetsOnLogout(t *testing.T) {
	ms := newModeServer(t, auth.ModeToken, false)
	ms.tokenLogin(t, "not-a-valid-token", http.StatusUnauthorized)
	ms.tokenLogin(t, "", http.StatusBadRequest)

	// The local mode's one-time URL means nothing here.
	rec := ms.do(httptest.NewRequest(http.MethodGet, "/login?token="+goodToken, nil))
	for _, c := range rec.Result().Cookies() {
		if c.Name == auth.CookieName {
			t.Fatal("GET /login?token= started a session in token mode")
		}
	}
	if !strings.Contains(rec.Body.String(), `data-testid="token-form"`) {
		t.Fatal("GET /login in token mode shows no token form")
	}

	// A token in the query string is not read.
	q := tokenSignInRequest(t, ms.e, "")
	q.URL.RawQuery = "token=" + goodToken
	if rec := ms.do(q); rec.Code != http.StatusBadRequest {
		t.Fatalf("token in the URL: status %d, want 400", rec.Code)
	}

	cookie := ms.tokenLogin(t, goodToken, http.StatusSeeOther)
	out := httptest.NewRequest(http.MethodPost, "/logout", nil)
	out.Header.Set("Sec-Fetch-Site", "same-origin")
	out.Header.Set("X-CSRF-Token", pageCSRFToken(t, ms.e, withCookie(cookie)))
	out.AddCookie(cookie)
	if rec := ms.do(out); rec.Code != http.StatusOK {
		t.Fatalf("logout: %d", rec.Code)
	}
	// A copy of the cookie kept from before the logout no longer works.
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.AddCookie(cookie)
	if rec = ms.do(r); rec.Code != http.StatusUnauthorized {
		t.Fatalf("old cookie after logout: status %d, want 401", rec.Code)
	}
}

func TestProxyModeIgnoresHeadersOfUntrustedRequests(t *testing.T) {
	ms := newModeServer(t, auth.ModeProxy, false)
	for name, secret := range map[string]string{"missing secret": "", "wrong secret": proxySecret + "x", "empty-ish": " "} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = proxyPeer
		r.Header.Set("X-Forwarded-User", "system:admin")
		r.Header.Set("X-Forwarded-Groups", "system:masters")
		if secret != "" {
			r.Header.Set(auth.DefaultProxySecretHeader, secret)
		}
		rec := ms.do(r)
		if rec.Code != http.StatusUnauthorized || strings.Contains(rec.Body.String(), "system:admin") {
			t.Errorf("%s: status %d, want 401 without the claimed user", name, rec.Code)
		}
	}
	// The right secret over plain HTTP from another host proves nothing: it
	// crossed a network in clear.
	inClear := httptest.NewRequest(http.MethodGet, "/", nil)
	proxySign("system:admin")(inClear)
	inClear.RemoteAddr = "10.244.1.7:40000"
	if rec := ms.do(inClear); rec.Code != http.StatusUnauthorized || strings.Contains(rec.Body.String(), "system:admin") {
		t.Errorf("the secret from a non-loopback peer over plain HTTP: status %d, want 401", rec.Code)
	}
	// A trusted request without a user is refused too.
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = proxyPeer
	r.Header.Set(auth.DefaultProxySecretHeader, proxySecret)
	if rec := ms.do(r); rec.Code != http.StatusUnauthorized {
		t.Errorf("trusted request without user: status %d", rec.Code)
	}
}

// failingAccess is an Access whose reviews cannot reach the API server.
type failingAccess struct{}

func (failingAccess) Can(context.Context, string, string, string, string, string) (bool, error) {
	return false, errors.New("connection refused")
}

// When the access review fails, local mode still shows the cache (its
// identity is the user's), token mode does not: the cache holds what the
// console may see, not what the user may.
func TestFailedAccessReviewHidesTheCacheOutsideLocalMode(t *testing.T) {
	for _, tc := range []struct {
		mode auth.Mode
		want int
	}{{auth.ModeLocal, http.StatusOK}, {auth.ModeToken, http.StatusForbidden}} {
		t.Run(string(tc.mode), func(t *testing.T) {
			ms := newModeServer(t, tc.mode, false)
			ms.e = newConsole(t, ms.deps, func(d *Deps) { d.Cluster, d.Access = newCSRCluster(), failingAccess{} }).e
			r := httptest.NewRequest(http.MethodGet, "/csrs", nil)
			ms.sign(r)
			if rec := ms.do(r); rec.Code != tc.want {
				t.Fatalf("status %d, want %d", rec.Code, tc.want)
			}
		})
	}
}

// Proxy mode has no session cookie: the event stream must live by the proxy's
// word, not report the session over; an untrusted stream request is refused.
func TestProxyModeServesTheEventStream(t *testing.T) {
	cl := newLiveCluster("csr-a")
	streams := live.NewStreams(live.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	lv := NewLiveUpdates(cl, streams)
	streams.Publish(lv.Render(kube.CSRs, nil, true)...)
	gate := &auth.Gate{Mode: auth.ModeProxy, Proxy: &auth.Proxy{UserHeader: "X-Forwarded-User",
		SecretHeader: auth.DefaultProxySecretHeader, Secret: []byte(proxySecret)}}
	srv := httptest.NewServer(newConsole(t, Deps{Cluster: cl, Access: allowKinds{"certificatesigningrequests": true}, Gate: gate, User: "console", Live: lv}).e)
	t.Cleanup(func() { streams.Close(); srv.Close() })

	open := func(secret string) *http.Response {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events?kinds=csrs", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("X-Forwarded-User", "alice")
		if secret != "" {
			req.Header.Set(auth.DefaultProxySecretHeader, secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := open(proxySecret)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	hello, err := sseclient.NewReader(resp.Body).Next()
	if err != nil || hello.Event != live.HelloEvent || hello.Data != "csrs" {
		t.Fatalf("first event %+v %v: want hello with csrs", hello, err)
	}
	untrusted := open("wrong")
	first, _ := sseclient.NewReader(untrusted.Body).Next()
	if first.Event == live.HelloEvent {
		t.Fatal("an untrusted request got the stream")
	}
}
