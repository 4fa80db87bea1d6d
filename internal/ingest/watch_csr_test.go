package ingest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

func requestPEM(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func csrVersion(rv string, request []byte, conds ...certificatesv1.CertificateSigningRequestCondition) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "r", UID: "uid-r", ResourceVersion: rv},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: request, SignerName: certificatesv1.KubeAPIServerClientSignerName}, Status: certificatesv1.CertificateSigningRequestStatus{Conditions: conds}}
}

// The cache's summary of the pending version's request is no change of
// spec.request; a request that is not that summary still shows as one.
func TestWatchEntryOfADecisionDiffsTheSummaryAsTheRequest(t *testing.T) {
	pemA := requestPEM(t, "a")
	sumA, _ := csr.Summarize(pemA)
	sumB, _ := csr.Summarize(requestPEM(t, "b"))
	approved := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: "True", Reason: "R"}
	pending := csrVersion("1", pemA)
	for _, c := range []struct {
		request   []byte
		showsSpec bool
	}{{sumA, false}, {sumB, true}} {
		cur := csrVersion("2", c.request, approved)
		e, ok := WatchEntry(kube.ObjectChange{Kind: kube.CSRs, Old: pending, New: cur}, w0)
		if !ok || !strings.Contains(e.Diff, "type: Approved") {
			t.Fatalf("no entry of the approval: %v %q", ok, e.Diff)
		}
		if got := strings.Contains(e.Diff, "\n+  request:"); got != c.showsSpec {
			t.Errorf("summary of the same request %v: the diff shows spec.request %v, want %v:\n%s", !c.showsSpec, got, c.showsSpec, e.Diff)
		}
		if string(cur.Spec.Request) != string(c.request) {
			t.Error("the cache's object was changed")
		}
	}
}
