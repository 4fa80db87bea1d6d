//go:build integration

package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// consoleHost is where the console under attack serves: 127.0.0.1, like local
// mode. Any other server on 127.0.0.1 (another port) is the same site.
const consoleHost = "127.0.0.1:8443"

// csrDecided reports whether the API server holds a decision for the CSR
// (read from the API server, not the console's cache).
func csrDecided(t *testing.T, cs kubernetes.Interface, name string) bool {
	t.Helper()
	csr, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied {
			return true
		}
	}
	return false
}

// approveForm is the hidden fields of the detail page's approve form, as a
// browser posts them (without its CSRF token, which each case chooses).
func approveForm(t *testing.T, ls *liveServer, sess *http.Cookie, name string) url.Values {
	t.Helper()
	_, doc, _ := ls.get(t, sess, "/csrs/"+name)
	form := doc.Find(`form[data-testid="action-approve-form"]`)
	if form.Length() != 1 {
		t.Fatal("the pending CSR's page has no approve form")
	}
	v := url.Values{"message": {"forged by TestForgedPostsCannotApproveACSR"}}
	form.Find(`input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		if n, _ := s.Attr("name"); n != "_csrf" {
			val, _ := s.Attr("value")
			v.Set(n, val)
		}
	})
	return v
}

// The attack of issue 14 point 3: a page on another port of 127.0.0.1 (same
// site, so the browser sends the SameSite=Strict session cookie), or on
// another site, posts an approval with a CSRF cookie it planted and the same
// value in the form. Every such post is 403 and the CSR stays pending on the
// API server; only the console's own page, with its session's token, decides.
func TestForgedPostsCannotApproveACSR(t *testing.T) {
	ls := newLiveServer(t, testcluster.Admin, false)
	victim := ls.login(t)
	other := ls.login(t) // another session of the console, e.g. another browser
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	name := testcluster.CreateCSR(t, testcluster.CSR{Signer: certificatesv1.KubeAPIServerClientSignerName})
	waitFor(t, "the cache to see the new CSR", 10*time.Second, func() bool { _, err := ls.cache.CSR(name); return err == nil })
	form := approveForm(t, ls, victim, name)
	victimToken := pageCSRFToken(t, ls.e, withCookie(victim))
	otherToken := pageCSRFToken(t, ls.e, withCookie(other))
	const planted = "attacker-chosen-token-0123456789abcdef"

	for _, tc := range []struct {
		name                  string
		site, origin          string
		cookie, field, header string
	}{
		{name: "same-site, planted cookie and matching field", site: "same-site", origin: "http://127.0.0.1:9999",
			cookie: planted, field: planted},
		{name: "same-site, planted cookie and matching header", site: "same-site", origin: "http://127.0.0.1:9999",
			cookie: planted, header: planted},
		{name: "sibling subdomain, planted pair", site: "same-site", origin: "http://evil.127.0.0.1.nip.io:8443",
			cookie: planted, field: planted},
		{name: "cross-site, planted pair", site: "cross-site", origin: "https://evil.example",
			cookie: planted, field: planted, header: planted},
		{name: "old browser (no Sec-Fetch-Site), foreign Origin, planted pair", origin: "http://127.0.0.1:9999",
			cookie: planted, field: planted},
		{name: "same-site with the victim's own token", site: "same-site", origin: "http://127.0.0.1:9999",
			field: victimToken},
		{name: "claims same-origin, foreign Origin, the victim's own token", site: "same-origin", origin: "http://127.0.0.1:9999",
			field: victimToken},
		{name: "same-origin, no token", site: "same-origin", origin: "http://" + consoleHost},
		{name: "same-origin, planted pair", site: "same-origin", cookie: planted, field: planted},
		{name: "same-origin, another session's token", site: "same-origin", origin: "http://" + consoleHost,
			field: otherToken, header: otherToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := url.Values{}
			for k, v := range form {
				body[k] = v
			}
			if tc.field != "" {
				body.Set("_csrf", tc.field)
			}
			r := httptest.NewRequest(http.MethodPost, "/csrs/"+name+"/approve", strings.NewReader(body.Encode()))
			r.Host = consoleHost
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tc.site != "" {
				r.Header.Set("Sec-Fetch-Site", tc.site)
			}
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if tc.header != "" {
				r.Header.Set("X-CSRF-Token", tc.header)
			}
			r.AddCookie(victim)
			if tc.cookie != "" {
				// Every name a CSRF cookie has had, old and new.
				for _, n := range []string{"clusterdesk_csrf", "_csrf", "csrf"} {
					r.AddCookie(&http.Cookie{Name: n, Value: tc.cookie})
				}
			}
			rec := ls.do(r)
			if rec.Code != http.StatusForbidden {
				t.Errorf("status %d, want 403: %.200s", rec.Code, rec.Body.String())
			}
			// A decision would be on the API server by now: the handler answers
			// after the approval call returns.
			if csrDecided(t, cs, name) {
				t.Fatalf("the forged post decided CSR %s on the API server", name)
			}
		})
	}

	// The console's own page, with the session's token, still works.
	legit := url.Values{}
	for k, v := range form {
		legit[k] = v
	}
	legit.Set("_csrf", victimToken)
	legit.Set("message", "approved from the console's own page")
	r := httptest.NewRequest(http.MethodPost, "/csrs/"+name+"/approve", strings.NewReader(legit.Encode()))
	r.Host = consoleHost
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.Header.Set("Origin", "http://"+consoleHost)
	r.AddCookie(victim)
	if rec := ls.do(r); rec.Code != http.StatusSeeOther {
		t.Fatalf("same-origin post with the session's token: status %d: %.300s", rec.Code, rec.Body.String())
	}
	if !csrDecided(t, cs, name) {
		t.Fatal("the legitimate approval did not reach the API server")
	}
}
