//go:build integration

package handlers

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// oidcRedirectURL is the console's callback as registered at the provider.
// Nothing listens on it: the test's browser stops at the provider's redirect
// and hands the callback to the console's handler, as a browser would.
const oidcRedirectURL = "http://127.0.0.1:18081" + urls.OIDCCallback

// oidcConsole is the console in oidc mode on the devcluster, signing in at
// its OpenID provider with one client.
type oidcConsole struct {
	e     http.Handler
	gate  *auth.Gate
	cache *kube.Cache
	idp   testcluster.OIDCProvider
}

func newOIDCConsole(t *testing.T, clientID, issuer string) *oidcConsole {
	t.Helper()
	return newOIDCReplica(t, clientID, issuer, auth.NewSessions())
}

// newOIDCReplica is newOIDCConsole sealing with sessions (replicas share
// their keys and sign-outs); more may change its Deps (live updates).
func newOIDCReplica(t *testing.T, clientID, issuer string, sessions *auth.Sessions, more ...func(*Deps)) *oidcConsole {
	t.Helper()
	return newOIDCConsoleLimited(t, clientID, issuer, sessions, SignInLimit{}, more...)
}

// newOIDCConsoleLimited is newOIDCReplica with limit as its sign-in limit.
func newOIDCConsoleLimited(t *testing.T, clientID, issuer string, sessions *auth.Sessions, limit SignInLimit, more ...func(*Deps)) *oidcConsole {
	t.Helper()
	idp := testcluster.OIDC(t)
	if issuer == "" {
		issuer = idp.Issuer
	}
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cache := syncedCache(t, cfg, log)
	users := strictUsers(t, cfg)
	rp, err := auth.NewOIDC(auth.OIDCConfig{
		Issuer: issuer, ClientID: clientID, ClientSecret: idp.Clients[clientID].Secret,
		RedirectURL: oidcRedirectURL, HTTPClient: idp.HTTPClient(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	gate := &auth.Gate{Mode: auth.ModeOIDC, Sessions: sessions, OIDC: rp}
	if err := gate.Check(); err != nil {
		t.Fatal(err)
	}
	deps := Deps{Log: log, Cluster: cache, Sessions: sessions, Gate: gate, User: "console", Users: users,
		TokenReview: reviewAs(cfg), SignInLimit: limit}
	return &oidcConsole{e: newConsole(t, deps, append([]consoleOption{perUserClients(users)}, more...)...).e, gate: gate, cache: cache, idp: idp}
}

func (oc *oidcConsole) do(r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	oc.e.ServeHTTP(rec, r)
	return rec
}

// oidcBrowser is a person's browser: the console's cookies, and a cookie jar
// for the provider that follows redirects while they stay on it.
type oidcBrowser struct {
	oc      *oidcConsole
	cookies map[string]*http.Cookie // the console's
	idp     *http.Client
	// via, when set, rewrites each request to the console as a proxy in
	// front of it would (signin_limit_integration_test.go).
	via func(*http.Request)
}

func (oc *oidcConsole) browser(t *testing.T) *oidcBrowser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	issuer, _ := url.Parse(oc.idp.Issuer)
	c := oc.idp.HTTPClient(t)
	c.Jar = jar
	c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host != issuer.Host {
			return http.ErrUseLastResponse
		}
		return nil
	}
	return &oidcBrowser{oc: oc, cookies: map[string]*http.Cookie{}, idp: c}
}

// get requests path from the console with the browser's cookies and keeps
// the cookies it sets (a cleared one is dropped).
func (b *oidcBrowser) get(path string) *httptest.ResponseRecorder {
	return b.send(httptest.NewRequest(http.MethodGet, path, nil))
}

func (b *oidcBrowser) send(r *http.Request) *httptest.ResponseRecorder {
	for _, c := range b.cookies {
		r.AddCookie(c)
	}
	if b.via != nil {
		b.via(r)
	}
	rec := b.oc.do(r)
	for _, c := range rec.Result().Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c
		}
	}
	return rec
}

// startAtProvider opens the console's sign-in and follows it to the
// provider's form; it returns the form's authRequestID.
func (b *oidcBrowser) startAtProvider(t *testing.T) string {
	t.Helper()
	rec := b.get(urls.OIDCLogin)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("GET %s: %d %s, want a redirect to the provider", urls.OIDCLogin, rec.Code, loginMessage(t, rec.Body.String()))
	}
	page, err := b.idp.Get(rec.Header().Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	id := page.Request.URL.Query().Get("authRequestID")
	if page.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("the authorize URL ended at %s (%s), not at the provider's form", page.Request.URL, page.Status)
	}
	return id
}

// answer posts the provider's form (button "signin" or "deny") and returns
// where the provider sends the browser back to.
func (b *oidcBrowser) answer(t *testing.T, authRequestID, username, button string) *url.URL {
	t.Helper()
	form := url.Values{"authRequestID": {authRequestID}, "username": {username},
		"password": {b.oc.idp.Users[username].Password}, button: {button}}
	resp, err := b.idp.PostForm(b.oc.idp.LoginURL, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil || !strings.HasPrefix(loc.String(), oidcRedirectURL+"?") {
		t.Fatalf("the provider's form (%s as %s): %s, %v; want a redirect to %s", button, username, resp.Status, loc, oidcRedirectURL)
	}
	return loc
}

// callback hands the provider's redirect to the console.
func (b *oidcBrowser) callback(loc *url.URL) *httptest.ResponseRecorder {
	return b.get(loc.RequestURI())
}

// signIn signs in as username through the provider's form and fails the
// test unless the console started a session.
func (b *oidcBrowser) signIn(t *testing.T, username string) {
	t.Helper()
	rec := b.callback(b.answer(t, b.startAtProvider(t), username, "signin"))
	if rec.Code != http.StatusOK || rec.Header().Get("Refresh") != "0; url=/" || b.cookies[auth.CookieName] == nil {
		t.Fatalf("callback as %s: %d, Refresh %q, session cookie %v: %s", username, rec.Code, rec.Header().Get("Refresh"),
			b.cookies[auth.CookieName] != nil, loginMessage(t, rec.Body.String()))
	}
}

func (b *oidcBrowser) session() *http.Cookie { return b.cookies[auth.CookieName] }

// sealed opens the browser's session cookie as the console does.
func (b *oidcBrowser) sealed(t *testing.T) auth.Session {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, c := range b.cookies {
		r.AddCookie(c)
	}
	s, err := b.oc.gate.Sessions.Peek(r)
	if err != nil {
		t.Fatalf("the browser's session cookie does not open: %v", err)
	}
	return s
}

func loginMessage(t *testing.T, body string) string {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(doc.Find(`h1`).First().Text() + ": " + doc.Find(`[data-testid="login-message"]`).Text())
}

// post sends a console form as the browser's page would (origin and the
// session's CSRF token).
func (b *oidcBrowser) post(t *testing.T, path string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.Header.Set("X-CSRF-Token", pageCSRFToken(t, b.oc.e, withCookie(b.session())))
	return b.send(r)
}

func (oc *oidcConsole) waitForCSR(t *testing.T, name string) string {
	t.Helper()
	waitFor(t, "the cache to see "+name, 15*time.Second, func() bool { _, err := oc.cache.CSR(name); return err == nil })
	c, _ := oc.cache.CSR(name)
	return string(c.UID)
}

// Bob (approvers, through the group claim) approves a CSR: the API server
// records the approval as oidc:bob, the condition names him, and after sign-out the
// cookie opens nothing.
func TestOIDCSignInActsAsThePerson(t *testing.T) {
	oc := newOIDCConsole(t, testcluster.OIDCClientConsole, "")
	bob := oc.browser(t)
	bob.signIn(t, "bob")

	home := bob.get("/")
	if home.Code != http.StatusOK {
		t.Fatalf("GET / signed in as bob: %d", home.Code)
	}
	doc, _ := goquery.NewDocumentFromReader(home.Body)
	if got := doc.Find(`[data-testid="user"]`).Text(); got != "oidc:bob" {
		t.Errorf("the page names %q, want oidc:bob (as the API server sees him)", got)
	}

	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "oidc-console"})
	uid := oc.waitForCSR(t, name)
	rec := bob.post(t, "/csrs/"+name+"/approve", url.Values{"uid": {uid}, "message": {"checked by bob"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("bob approving %s: %d %s", name, rec.Code, rec.Body.String())
	}
	waitFor(t, "the approval to reach the cache", 15*time.Second, func() bool {
		c, err := oc.cache.CSR(name)
		return err == nil && len(c.Status.Conditions) > 0
	})
	c, _ := oc.cache.CSR(name)
	if msg := c.Status.Conditions[0].Message; !strings.Contains(msg, "oidc:bob") || !strings.Contains(msg, "checked by bob") {
		t.Errorf("approval condition message %q should name oidc:bob and keep his text", msg)
	}
	ev := testcluster.WaitAuditEvent(t, 30*time.Second, func(ev testcluster.AuditEvent) bool {
		return ev.Verb == "update" && ev.ObjectRef != nil && ev.ObjectRef.Name == name && ev.ObjectRef.Subresource == "approval" &&
			ev.ResponseStatus != nil && ev.ResponseStatus.Code == http.StatusOK && ev.Stage == "ResponseComplete"
	})
	if ev.User.Username != "oidc:bob" || ev.ImpersonatedUser != nil {
		t.Errorf("the audit log records the approval by %q (impersonating %v), want oidc:bob with his own token", ev.User.Username, ev.ImpersonatedUser)
	}

	old := bob.session()
	if rec := bob.post(t, "/logout", nil); rec.Code != http.StatusOK {
		t.Fatalf("logout: %d", rec.Code)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.AddCookie(old)
	if rec := oc.do(r); rec.Code != http.StatusUnauthorized {
		t.Errorf("the signed-out session's cookie: %d, want 401", rec.Code)
	}
}

// Carol (auditors) may read CSRs but not decide them: the console shows the
// API server's own refusal, naming her.
func TestOIDCWriteRefusedWithTheAPIServersMessage(t *testing.T) {
	oc := newOIDCConsole(t, testcluster.OIDCClientConsole, "")
	carol := oc.browser(t)
	carol.signIn(t, "carol")
	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "oidc-console"})
	uid := oc.waitForCSR(t, name)
	if rec := carol.get("/csrs/" + name); rec.Code != http.StatusOK {
		t.Fatalf("carol reading %s: %d", name, rec.Code)
	}
	rec := carol.post(t, "/csrs/"+name+"/approve", url.Values{"uid": {uid}})
	body := rec.Body.String()
	if rec.Code != http.StatusForbidden || !strings.Contains(body, `User &#34;oidc:carol&#34; cannot update resource`) {
		t.Errorf("carol approving: %d, want 403 with the API server's message naming oidc:carol; body: %.2000s", rec.Code, body)
	}
	if c, _ := oc.cache.CSR(name); len(c.Status.Conditions) != 0 {
		t.Error("carol's approval went through")
	}
}

// A callback is good once, in the browser that started it.
func TestOIDCCallbackRefusesReplayAndForeignState(t *testing.T) {
	oc := newOIDCConsole(t, testcluster.OIDCClientConsole, "")
	alice := oc.browser(t)
	id := alice.startAtProvider(t)
	flight := make(map[string]*http.Cookie)
	for k, v := range alice.cookies {
		flight[k] = v
	}
	loc := alice.answer(t, id, "alice", "signin")
	if rec := alice.callback(loc); rec.Code != http.StatusOK {
		t.Fatalf("first callback: %d %s", rec.Code, loginMessage(t, rec.Body.String()))
	}

	// The same browser again: its flight is spent.
	replay := oc.browser(t)
	rec := replay.callback(loc)
	if rec.Code != http.StatusBadRequest || replay.session() != nil || !strings.Contains(loginMessage(t, rec.Body.String()), "no sign-in under way") {
		t.Errorf("callback replayed without the flight: %d %q", rec.Code, loginMessage(t, rec.Body.String()))
	}
	// With a copy of the flight cookie too: the provider refuses the used code.
	for k, v := range flight {
		replay.cookies[k] = v
	}
	rec = replay.callback(loc)
	if rec.Code != http.StatusBadGateway || replay.session() != nil || !strings.Contains(loginMessage(t, rec.Body.String()), "refused the sign-in") {
		t.Errorf("callback replayed with the flight cookie: %d %q", rec.Code, loginMessage(t, rec.Body.String()))
	}

	// Another browser's answer (login CSRF: an attacker's code and state
	// planted in the victim's browser) does not match the victim's flight.
	attacker, victim := oc.browser(t), oc.browser(t)
	attackerLoc := attacker.answer(t, attacker.startAtProvider(t), "dave", "signin")
	victim.startAtProvider(t)
	rec = victim.callback(attackerLoc)
	if rec.Code != http.StatusBadRequest || victim.session() != nil || !strings.Contains(loginMessage(t, rec.Body.String()), "not this browser's") {
		t.Errorf("another browser's answer: %d %q", rec.Code, loginMessage(t, rec.Body.String()))
	}
}

func TestOIDCDeniedConsentPage(t *testing.T) {
	oc := newOIDCConsole(t, testcluster.OIDCClientConsole, "")
	dave := oc.browser(t)
	loc := dave.answer(t, dave.startAtProvider(t), "dave", "deny")
	if loc.Query().Get("error") != "access_denied" {
		t.Fatalf("deny sent %s, want error=access_denied", loc)
	}
	rec := dave.callback(loc)
	if rec.Code != http.StatusForbidden || dave.session() != nil || !strings.Contains(loginMessage(t, rec.Body.String()), "declined") {
		t.Errorf("denied consent: %d %q", rec.Code, loginMessage(t, rec.Body.String()))
	}
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(rec.Body.String()))
	if href, _ := doc.Find(`[data-testid="oidc-signin"]`).Attr("href"); href != urls.OIDCLogin {
		t.Errorf("the page offers no way to sign in again (link %q)", href)
	}
}

// The console accepts an ID token for its own client id, but the API server
// does not accept that audience: the page says so instead of every page
// failing after sign-in.
func TestOIDCAudienceTheAPIServerRefuses(t *testing.T) {
	oc := newOIDCConsole(t, testcluster.OIDCClientNotKube, "")
	alice := oc.browser(t)
	rec := alice.callback(alice.answer(t, alice.startAtProvider(t), "alice", "signin"))
	msg := loginMessage(t, rec.Body.String())
	if rec.Code != http.StatusForbidden || alice.session() != nil ||
		!strings.Contains(msg, "API server does not accept") || !strings.Contains(msg, testcluster.OIDCClientNotKube) {
		t.Errorf("audience %s: %d %q", testcluster.OIDCClientNotKube, rec.Code, msg)
	}
}

// With 10-second ID tokens the session outlives its first token through the
// refresh token, and acts with the renewed one; a refresh token the provider
// does not know ends the session with a page saying so once the token expires.
func TestOIDCSessionOutlivesItsIDTokenThroughRefresh(t *testing.T) {
	oc := newOIDCConsole(t, testcluster.OIDCClientShortLived, "")
	alice := oc.browser(t)
	alice.signIn(t, "alice")
	first := alice.sealed(t).Creds
	if first.IDToken == "" || first.RefreshToken == "" || first.Token != "" {
		t.Fatal("the session cookie holds no ID token once and refresh token")
	}

	// Use the console until the first token has expired.
	waitFor(t, "the first ID token to expire", time.Minute, func() bool {
		if rec := alice.get("/csrs"); rec.Code != http.StatusOK {
			t.Fatalf("GET /csrs while the session should be renewed: %d %s", rec.Code, loginMessage(t, rec.Body.String()))
		}
		return time.Now().After(first.Expiry.Add(time.Second))
	})
	rec := alice.get("/csrs")
	now := alice.sealed(t).Creds
	if rec.Code != http.StatusOK || now.IDToken == first.IDToken || !now.Expiry.After(first.Expiry) {
		t.Fatalf("after expiry: %d, token renewed %v", rec.Code, now.IDToken != first.IDToken)
	}
	doc, _ := goquery.NewDocumentFromReader(rec.Body)
	if doc.Find(`[data-testid="banner-forbidden"]`).Length() != 0 {
		t.Errorf("the CSR queue after renewal is forbidden to alice: the renewed token was not used")
	}
	// A write after the first token expired: the API server accepts only the renewed one.
	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "oidc-console"})
	if rec := alice.post(t, "/csrs/"+name+"/approve", url.Values{"uid": {oc.waitForCSR(t, name)}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("alice approving after her first ID token expired: %d %s", rec.Code, rec.Body.String())
	}

	// The provider forgets nothing, but a refresh token it never issued is refused.
	// (A session sealed like the console's, with that refresh token.)
	forged := alice.sealed(t)
	cur := forged.Creds
	forged.Creds.RefreshToken = "not-a-refresh-token"
	rec = httptest.NewRecorder()
	if _, err := oc.gate.Sessions.StartWith(rec, nil, forged); err != nil {
		t.Fatal(err)
	}
	for _, c := range rec.Result().Cookies() {
		alice.cookies[c.Name] = c
	}
	var last *httptest.ResponseRecorder
	waitFor(t, "the session to end once its token expired", time.Minute, func() bool {
		last = alice.get("/csrs")
		return last.Code != http.StatusOK
	})
	if msg := loginMessage(t, last.Body.String()); last.Code != http.StatusUnauthorized || !strings.Contains(msg, "did not renew") {
		t.Errorf("failed renewal: %d %q, want 401 saying the provider did not renew the sign-in", last.Code, msg)
	}
	if time.Now().Before(cur.Expiry) {
		t.Error("the session ended before its ID token expired")
	}
}

// A console whose issuer is down (a closed port; the devcluster's provider
// is left alone) shows a page naming the issuer, not a 500.
func TestOIDCIssuerDownPage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "https://" + ln.Addr().String()
	ln.Close()
	oc := newOIDCConsole(t, testcluster.OIDCClientConsole, issuer)
	b := oc.browser(t)
	rec := b.get(urls.OIDCLogin)
	msg := loginMessage(t, rec.Body.String())
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(msg, "cannot be reached") || !strings.Contains(msg, issuer) {
		t.Errorf("issuer down: %d %q", rec.Code, msg)
	}
	if len(b.cookies) != 0 {
		t.Errorf("a failed start left cookies: %v", b.cookies)
	}
}
