//go:build integration

package handlers

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

const publicOrigin = "https://console.example.com"

// behindIngress is token mode's console on the devcluster as a
// TLS-terminating Ingress reaches it: a plain-HTTP socket, --public-url
// https://console.example.com, real token reviews. Its client sends cookies
// by hand, as the browser delivers them through the Ingress, and follows no
// redirect.
type behindIngress struct {
	srv    *httptest.Server
	client *http.Client
}

func newBehindIngress(t *testing.T) *behindIngress {
	t.Helper()
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	users := strictUsers(t, cfg)
	deps := Deps{Cluster: emptyCluster{}, User: testcluster.Admin, PublicOrigin: publicOrigin}
	b := &behindIngress{srv: httptest.NewServer(newConsole(t, deps, perUserClients(users), tokenMode(reviewAs(cfg))).e)}
	t.Cleanup(b.srv.Close)
	b.client = &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return b
}

func (b *behindIngress) do(t *testing.T, method, path string, form url.Values, cookies ...*http.Cookie) *http.Response {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Origin", publicOrigin)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// signInForm is GET /login: the pre-session cookie and the form's token.
func (b *behindIngress) signInForm(t *testing.T) (*http.Cookie, string) {
	t.Helper()
	resp := b.do(t, http.MethodGet, "/login", nil)
	checkHardened(t, "GET /login", resp)
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := doc.Find(`[data-testid="token-form"] input[name="_csrf"]`).Attr("value")
	for _, c := range resp.Cookies() {
		if c.Name == "__Host-clusterdesk_presession" && tok != "" {
			return c, tok
		}
	}
	t.Fatalf("GET /login (status %d): no __Host- pre-session with a form token: %v", resp.StatusCode, resp.Header["Set-Cookie"])
	return nil, ""
}

// checkHardened: HSTS on the answer, and every Set-Cookie line Secure,
// __Host-, Path=/ and without Domain.
func checkHardened(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	if got := resp.Header.Get("Strict-Transport-Security"); got != hstsValue {
		t.Errorf("%s: Strict-Transport-Security %q, want %q", what, got, hstsValue)
	}
	for _, line := range resp.Header["Set-Cookie"] {
		l := strings.ToLower(line)
		if !strings.HasPrefix(line, "__Host-") || !strings.Contains(l, "; secure") || !strings.Contains(l, "; path=/;") && !strings.HasSuffix(l, "; path=/") || strings.Contains(l, "domain=") {
			t.Errorf("%s: Set-Cookie %q, want __Host-, Secure, Path=/, no Domain", what, line)
		}
	}
}

// The attacks of issue 25 point 2 behind a TLS-terminating Ingress, on the
// devcluster: a sibling subdomain (evil.example.com) can set cookies for
// Domain=example.com, which the browser sends to console.example.com, but it
// cannot set __Host- ones. With the https public URL the console reads only
// the __Host- names, so
//   - a valid sealed session (the attacker's own: the victim would act as
//     the attacker) planted as clusterdesk_session is no session, and
//   - a valid pre-session planted as clusterdesk_presession, with the form
//     token the attacker got with it (login CSRF), does not sign in.
func TestSiblingSubdomainCannotPlantCookiesBehindAnIngress(t *testing.T) {
	b := newBehindIngress(t)
	token := staticUser(t, testcluster.Admin).token

	pre, csrf := b.signInForm(t)
	resp := b.do(t, http.MethodPost, "/login", url.Values{"token": {token}, "_csrf": {csrf}}, pre)
	checkHardened(t, "POST /login", resp)
	var sess *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == auth.SecureCookieName {
			sess = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || sess == nil {
		t.Fatalf("sign-in with the admin token: status %d, cookies %v", resp.StatusCode, resp.Header["Set-Cookie"])
	}
	if resp := b.do(t, http.MethodGet, "/", nil, sess); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET / with the __Host- session: status %d", resp.StatusCode)
	}

	planted := &http.Cookie{Name: auth.CookieName, Value: sess.Value}
	if resp := b.do(t, http.MethodGet, "/", nil, planted); resp.StatusCode == http.StatusOK {
		t.Errorf("GET / with a valid session planted as %s: status 200, want it refused", planted.Name)
	}

	pre, csrf = b.signInForm(t)
	plantedPre := &http.Cookie{Name: "clusterdesk_presession", Value: pre.Value}
	resp = b.do(t, http.MethodPost, "/login", url.Values{"token": {token}, "_csrf": {csrf}}, plantedPre)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign-in form posted with the pre-session planted as %s: status %d, want 403", plantedPre.Name, resp.StatusCode)
	}
	for _, c := range resp.Cookies() {
		if strings.Contains(c.Name, "clusterdesk_session") && c.Value != "" {
			t.Errorf("login CSRF: the planted pre-session signed the browser in (%s)", c.Name)
		}
	}
}
