//go:build integration

package charttest

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
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
