package handlers

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// liveCSRLookup answers Lookup.CSR with the API server's object; nothing else.
type liveCSRLookup struct {
	Lookup
	live map[string]*certificatesv1.CertificateSigningRequest
	gets int
}

func (l *liveCSRLookup) CSR(_ context.Context, name string) (*certificatesv1.CertificateSigningRequest, error) {
	l.gets++
	return l.live[name].DeepCopy(), nil
}

// The cache leaves issued certificates out (kube's transform); the request's
// page and its download read the certificate with a GET as the user, from
// the very request shown: a request replaced under the same name gives none.
func TestCSRCertificateReadLive(t *testing.T) {
	ca := testfixtures.NewCA(t, "test-ca")
	live := fakeCSR(t, "issued", apiClientSigner, "ann", time.Now(), certificatesv1.CertificateApproved)
	live.Status.Certificate = ca.Issue(t, &ca.Key.PublicKey, x509.Certificate{Subject: pkix.Name{CommonName: "ann"}})
	replaced := fakeCSR(t, "replaced", apiClientSigner, "bob", time.Now(), certificatesv1.CertificateApproved)
	replaced.Status.Certificate = live.Status.Certificate
	now := replaced.DeepCopy()
	now.UID = types.UID("another")

	cachedOf := func(c *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequest {
		o, err := kube.StripForCache(c.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		cached := o.(*certificatesv1.CertificateSigningRequest)
		if !kube.CertificateLeftOut(cached) {
			t.Fatalf("the cache kept %s's certificate", c.Name)
		}
		return cached
	}
	cluster := newCSRCluster(cachedOf(live), cachedOf(replaced))
	lookup := &liveCSRLookup{live: map[string]*certificatesv1.CertificateSigningRequest{"issued": live, "replaced": now}}
	ts := newCSRTestServer(t, cluster, signerAccess{}, false, withLookup(lookup))
	sess := ts.login(t)

	rec, _ := ts.request(t, sess, http.MethodGet, "/csrs/issued/certificate", nil, false)
	if rec.Code != http.StatusOK || rec.Body.String() != string(live.Status.Certificate) {
		t.Errorf("download: status %d body %q, want the live certificate", rec.Code, rec.Body.String())
	}
	rec, doc := ts.request(t, sess, http.MethodGet, "/csrs/issued", nil, false)
	section := doc.Find(`[data-testid="issued-certificate"]`).Text()
	if rec.Code != http.StatusOK || !strings.Contains(section, "CN=ann") || strings.Contains(section, "no parsable certificate") {
		t.Errorf("page: status %d, issued certificate section %q, want the live certificate's subject", rec.Code, section)
	}
	if rec, _ := ts.request(t, sess, http.MethodGet, "/csrs/replaced/certificate", nil, false); rec.Code != http.StatusConflict {
		t.Errorf("replaced: status %d, want 409 (another request's certificate is not this one's)", rec.Code)
	}
	if lookup.gets != 3 {
		t.Errorf("%d GETs, want one per request", lookup.gets)
	}
}

// The cache keeps a decided request's summary in place of its PEM
// (kube.TransformWith, csr.Summarize): the queue shows its row from the
// summary as from the PEM, and its page reads the PEM with a GET as the user.
func TestCSRDecidedRequestSummarized(t *testing.T) {
	live := fakeCSR(t, "denied", apiClientSigner, "dora", time.Now(), certificatesv1.CertificateDenied)
	o, err := kube.TransformWith(&kube.CRDSchemas{}, csr.Summarize)(live.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	cached := o.(*certificatesv1.CertificateSigningRequest)
	if !csr.IsSummary(cached.Spec.Request) {
		t.Fatal("the cache kept the denied request's PEM")
	}
	cluster := newCSRCluster(cached)
	lookup := &liveCSRLookup{live: map[string]*certificatesv1.CertificateSigningRequest{"denied": live}}
	ts := newCSRTestServer(t, cluster, signerAccess{}, false, withLookup(lookup))
	sess := ts.login(t)

	rec, doc := ts.request(t, sess, http.MethodGet, "/csrs?state=denied&q=cn%3Ddora", nil, false)
	if rec.Code != http.StatusOK || !strings.Contains(doc.Find("tbody").Text(), "denied") || strings.Contains(rec.Body.String(), "Bad request") {
		t.Errorf("queue: status %d, want the denied request's row, found by its subject and not bad:\n%s", rec.Code, doc.Find("tbody").Text())
	}
	rec, doc = ts.request(t, sess, http.MethodGet, "/csrs/denied", nil, false)
	section := doc.Find(`[data-testid="decoded-request"]`).Text()
	if rec.Code != http.StatusOK || !strings.Contains(section, "CN=dora") || doc.Find(`[data-testid="banner-bad-request"]`).Length() != 0 {
		t.Errorf("page: status %d, decoded request %q, want the request's subject", rec.Code, section)
	}
	if lookup.gets != 1 {
		t.Errorf("%d GETs, want the page's one", lookup.gets)
	}
}
