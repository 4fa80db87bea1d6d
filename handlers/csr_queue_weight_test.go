package handlers

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// queuePageBudget is the most HTML a queue page of 100 rows may weigh at the
// worst shapes (issue 27: "≤ 400 KB"); pages were 710 KB when each 200-SAN
// row carried its 195 hidden names.
const queuePageBudget = 400 << 10

// The queue's first page at the shapes of make bench-pages' worst cluster: 30
// kubelet serving requests of their own nodes with 200 SANs each and
// 253-character names (the newest, so first), then kubelet client requests
// (kubelets name them csr-<5 characters>), each with its groups. Bytes are
// deterministic, so this is a budget, not a timing. Before the rows fetched
// their hidden SANs on opening, the 30 serving rows alone carried ~350 KB of
// names. (A page whose 100 rows all have 253-character names weighs ~500 KB:
// the name is in seven places of a row — its id, data-name, the box's value
// and label, href, title, text.)
func TestCSRQueuePageStaysWithinItsByteBudgetAtWorstShapes(t *testing.T) {
	now := time.Now()
	var csrs []*certificatesv1.CertificateSigningRequest
	key := testfixtures.SigningKey()
	for i := range 120 {
		node := fmt.Sprintf("ip-10-0-%d-%d.eu-west-1.compute.internal", i/250, i%250)
		name, signer := fmt.Sprintf("csr-%05d", i), "kubernetes.io/kube-apiserver-client-kubelet"
		c := fakeCSR(t, name, signer, "system:node:"+node, now.Add(-time.Duration(i)*time.Second))
		c.Spec.Request = testfixtures.RequestPEM(t, key, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}})
		if i < 30 {
			// A serving request of its own node, with 200 SANs, under a
			// 253-character name.
			var sans []string
			for j := range 200 {
				sans = append(sans, fmt.Sprintf("svc-%03d.%s", j, node))
			}
			c.Name = fmt.Sprintf("%03d-", i) + strings.Repeat("n", 249)
			c.Spec.SignerName = certificatesv1.KubeletServingSignerName
			c.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
			c.Spec.Request = testfixtures.RequestPEM(t, key, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}, DNSNames: sans})
		}
		c.Spec.Groups = []string{"system:nodes", "system:authenticated"}
		csrs = append(csrs, c)
	}
	signers := map[string]bool{"kubernetes.io/kube-apiserver-client-kubelet": true, certificatesv1.KubeletServingSignerName: true}
	ts := newCSRTestServer(t, newCSRCluster(csrs...), signerAccess{signers: signers}, false)
	sess := ts.login(t)
	for _, path := range []string{"/csrs", "/csrs?state=pending"} {
		rec, doc := ts.request(t, sess, http.MethodGet, path, nil, false)
		rows := doc.Find(`[data-testid="list-row"]`).Length()
		if rec.Code != http.StatusOK || rows != 100 {
			t.Fatalf("%s: %d with %d rows (want a full page of 100)", path, rec.Code, rows)
		}
		if n := rec.Body.Len(); n > queuePageBudget {
			t.Errorf("%s: %d KB for 100 rows (%d bytes a row), over the %d KB budget", path, n>>10, n/rows, queuePageBudget>>10)
		} else {
			t.Logf("%s: %d KB for 100 rows", path, n>>10)
		}
	}
}
