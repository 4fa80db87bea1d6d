//go:build integration

package charttest

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// signInWithToken signs in to a token-mode console through its sign-in form
// with the devcluster identity's bearer token, as a browser would, and
// returns the browser and the name the home page shows.
func signInWithToken(t *testing.T, console *testcluster.ConsoleBinary, identity string) (*http.Client, string) {
	t.Helper()
	person := testcluster.RestConfig(t, identity)
	if person.BearerToken == "" {
		t.Fatalf("the devcluster's %s has no bearer token", identity)
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	origin := console.Origin
	doc, code := getPage(t, client, origin+"/login")
	csrf, _ := doc.Find(`[data-testid="token-form"] input[name="_csrf"]`).Attr("value")
	if csrf == "" {
		t.Fatalf("GET /login (%d): no token sign-in form\n%s", code, console.Logs())
	}
	req, _ := http.NewRequest(http.MethodPost, origin+"/login", strings.NewReader(url.Values{"token": {person.BearerToken}, "_csrf": {csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", origin)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	doc, code = getPage(t, client, origin+"/")
	if code != http.StatusOK {
		t.Fatalf("GET / after signing in with the %s's token: %d\n%s", identity, code, console.Logs())
	}
	return client, signedInAs(doc)
}

// goqueryDoc parses a response's body.
func goqueryDoc(resp *http.Response) (*goquery.Document, error) {
	return goquery.NewDocumentFromReader(resp.Body)
}

// getPage GETs a page and parses it.
func getPage(t *testing.T, client *http.Client, u string) (*goquery.Document, int) {
	t.Helper()
	resp, err := client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	return doc, resp.StatusCode
}

// signedInAs is who a console page says is signed in.
func signedInAs(doc *goquery.Document) string {
	return strings.TrimSpace(doc.Find(`[data-testid="user"]`).First().Text())
}

// tlsFront is what the examples put in front of the pod (an Ingress, a
// Gateway): TLS on loopback, at the https public URL the chart renders,
// forwarding to the pod's port (set once the pod listens) with the Host
// kept and X-Forwarded-For/Host/Proto set, as an Ingress controller does.
type tlsFront struct {
	*httptest.Server
	upstream atomic.Pointer[url.URL]
}

func newTLSFront(t *testing.T) *tlsFront {
	t.Helper()
	f := &tlsFront{}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(f.upstream.Load())
		r.SetXForwarded()
		r.Out.Host = r.In.Host
	}, FlushInterval: -1}
	f.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.upstream.Load() == nil {
			http.Error(w, "no upstream yet", http.StatusBadGateway)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// forwardTo points the front at the pod's address.
func (f *tlsFront) forwardTo(t *testing.T, upstream string) {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	f.upstream.Store(u)
}

// browser is a person's browser for the front and the devcluster's OpenID
// provider: it trusts both, keeps cookies and follows redirects.
func (f *tlsFront) browser(t *testing.T, idp testcluster.OIDCProvider) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(idp.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(f.Certificate())
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatalf("no CA certificate in %s", idp.CAFile)
	}
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
}

// signInAtProvider takes the browser from startURL (a page that sends it to
// the devcluster's OpenID provider) through the provider's form as username
// and back, and returns the page it ends on.
func signInAtProvider(t *testing.T, browser *http.Client, idp testcluster.OIDCProvider, startURL, username string) (*goquery.Document, *http.Response) {
	t.Helper()
	resp, err := browser.Get(startURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Request.URL.Query().Get("authRequestID")
	if resp.StatusCode != http.StatusOK || id == "" || !strings.HasPrefix(resp.Request.URL.String(), idp.Issuer) {
		t.Fatalf("GET %s ended at %s (%s), not at the provider's form", startURL, resp.Request.URL, resp.Status)
	}
	user, ok := idp.Users[username]
	if !ok {
		t.Fatalf("the devcluster's provider has no user %s", username)
	}
	resp, err = browser.PostForm(idp.LoginURL, url.Values{"authRequestID": {id}, "username": {username},
		"password": {user.Password}, "signin": {"signin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	return doc, resp
}
