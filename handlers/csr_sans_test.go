package handlers

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// A 200-SAN request's queue row counts the SANs it leaves out and fetches
// them only when "195 more" opens: a page of such rows carried 15 KB of names
// per row before. The fetch names the request the row showed by UID.
func TestCSRQueueRowFetchesItsOtherSANsWhenOpened(t *testing.T) {
	var dns []string
	for i := range 200 {
		dns = append(dns, fmt.Sprintf("node-%03d.sans.example.com", i))
	}
	c := fakeCSR(t, "many-sans", apiClientSigner, "ann", time.Now().Add(-time.Minute))
	c.Spec.Request = testfixtures.RequestPEM(t, testfixtures.SigningKey(), &x509.CertificateRequest{Subject: pkix.Name{CommonName: "many"}, DNSNames: dns})
	ts := newCSRTestServer(t, newCSRCluster(c), signerAccess{signers: map[string]bool{apiClientSigner: true}}, false)
	sess := ts.login(t)

	rec, doc := ts.request(t, sess, http.MethodGet, "/csrs", nil, false)
	if rec.Code != http.StatusOK {
		t.Fatalf("queue: %d", rec.Code)
	}
	more := doc.Find(`[data-testid="list-row"][data-name="many-sans"] [data-testid="more-values"]`)
	if got := strings.TrimSpace(more.Find(`[data-testid="more-summary"]`).Text()); got != "195 more" {
		t.Fatalf("summary %q", got)
	}
	if n := doc.Find(`[data-testid="more-value"]`).Length(); n != 0 || strings.Contains(rec.Body.String(), dns[199]) {
		t.Errorf("the queue page carries %d of the SANs behind \"195 more\" (want none until opened)", n)
	}
	href, _ := more.Attr("hx-get")
	if href != "/csrs/many-sans/sans?uid="+string(c.UID) {
		t.Fatalf("hx-get %q", href)
	}
	if link := more.Find(`a`).AttrOr("href", ""); link != "/csrs/many-sans" {
		t.Errorf("without script the disclosure links to the request's page: %q", link)
	}

	rec, frag := ts.request(t, sess, http.MethodGet, href, nil, true)
	values := frag.Find(`[data-testid="more-value"]`).Map(func(_ int, s *goquery.Selection) string { return s.Text() })
	if rec.Code != http.StatusOK || len(values) != 195 || values[0] != "DNS "+dns[5] || values[194] != "DNS "+dns[199] {
		t.Fatalf("fragment %d: %d values %v…", rec.Code, len(values), values[:min(2, len(values))])
	}

	// The row showed another request under this name: say so, list nothing.
	rec, frag = ts.request(t, sess, http.MethodGet, "/csrs/many-sans/sans?uid=00000000-0000-4000-8000-000000000000", nil, true)
	if rec.Code != http.StatusOK || frag.Find(`[data-testid="more-replaced"]`).Length() != 1 || frag.Find(`[data-testid="more-value"]`).Length() != 0 {
		t.Errorf("replaced request: %d %q", rec.Code, rec.Body.String())
	}
	// A plain link goes to the request's page, which lists them all.
	rec, _ = ts.request(t, sess, http.MethodGet, href, nil, false)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/csrs/many-sans" {
		t.Errorf("plain GET: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	// A request that does not exist is the ordinary 404.
	if rec, _ = ts.request(t, sess, http.MethodGet, "/csrs/gone/sans?uid=x", nil, true); rec.Code != http.StatusNotFound {
		t.Errorf("missing request: %d", rec.Code)
	}
}
