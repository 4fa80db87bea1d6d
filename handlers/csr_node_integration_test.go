//go:build integration

package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestKubeletServingSANsAreCheckedAgainstTheNode creates a real Node object
// (the devcluster runs no kubelet, but the API accepts the object) and a
// kubelet-serving CSR for it with one SAN the Node has and one it has not: the
// detail page must name only the foreign one. A CSR for a node that does not
// exist gets the "no such Node" finding instead.
func TestKubeletServingSANsAreCheckedAgainstTheNode(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	node := fmt.Sprintf("it-node-%d", time.Now().UnixNano())
	n, err := cs.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	n.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "10.1.2.3"},
		{Type: corev1.NodeHostName, Address: node},
	}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	serving := []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth, certificatesv1.UsageDigitalSignature}
	known := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "known", Signer: certificatesv1.KubeletServingSignerName, CommonName: "system:node:" + node,
		Organizations: []string{"system:nodes"}, DNSNames: []string{node, "evil.example.com"}, IPs: []string{"10.1.2.3"}, Usages: serving})
	ghost := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "ghost", Signer: certificatesv1.KubeletServingSignerName, CommonName: "system:node:" + node + "-ghost",
		Organizations: []string{"system:nodes"}, DNSNames: []string{node + "-ghost"}, Usages: serving})
	ls.waitCached(t, known, ghost)

	// The page itself reads no Node: it leaves a placeholder that loads the
	// comparison from the node-check route, which reads the Node as the user.
	code, doc, _ := ls.get(t, sess, "/csrs/"+known)
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if href, _ := doc.Find(`[data-testid="csr-node-check"]`).Attr("hx-get"); href != "/csrs/"+known+"/node-check" {
		t.Fatalf("the page should load the Node check from its route, hx-get = %q", href)
	}
	if doc.Find(`[data-check^="node-"]`).Length() != 0 {
		t.Error("the page itself must not carry a Node finding: the check loads after it")
	}

	// Followed as a link (no JavaScript): the whole page with the comparison;
	// loaded by htmx: the fragment with the same finding.
	for _, htmx := range []bool{false, true} {
		r := httptest.NewRequest(http.MethodGet, "/csrs/"+known+"/node-check", nil)
		r.AddCookie(sess)
		if htmx {
			r.Header.Set("HX-Request", "true")
		}
		rec := ls.do(r)
		doc, err := goquery.NewDocumentFromReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("htmx %v: status %d", htmx, rec.Code)
		}
		f := doc.Find(`[data-testid="finding"][data-check="node-addresses"]`)
		msg := strings.Join(strings.Fields(f.Text()), " ")
		if f.Length() != 1 || !strings.Contains(msg, "evil.example.com") || strings.Contains(msg, "10.1.2.3") {
			t.Fatalf("htmx %v: want one node-addresses finding naming only evil.example.com, got %d: %q", htmx, f.Length(), msg)
		}
		if doc.Find(`[data-check="node-unknown"]`).Length() != 0 {
			t.Errorf("htmx %v: the Node exists and admin may read it: it must not be called unknown", htmx)
		}
		if htmx && doc.Find(`[data-testid="csr-node-check-result"]`).Length() != 1 {
			t.Errorf("the htmx answer is the check's fragment")
		}
	}

	_, doc, _ = ls.get(t, sess, "/csrs/"+ghost+"/node-check")
	if doc.Find(`[data-testid="finding"][data-check="node-missing"]`).Length() != 1 {
		t.Fatalf("a CSR for a node that does not exist should get the node-missing finding")
	}
}
