//go:build integration

package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// uid is the UID of the CSR name as the console shows it (its cache), which
// every decision form carries.
func (ls *liveServer) uid(t *testing.T, name string) string {
	t.Helper()
	c, err := ls.cache.CSR(name)
	if err != nil {
		t.Fatalf("the console does not show %s: %v", name, err)
	}
	return string(c.UID)
}

// liveUID is the UID of the CSR name on the API server, for tests whose
// console keeps its cache to itself.
func liveUID(t *testing.T, name string) string {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	c, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get CSR %s: %v", name, err)
	}
	return string(c.UID)
}

func TestApproveCSRIssuesACertificate(t *testing.T) {
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	name := testcluster.CreateCSR(t, testcluster.CSR{Signer: "kubernetes.io/kube-apiserver-client"})
	waitFor(t, "the cache to see the new CSR", 10*time.Second, func() bool { _, err := ls.cache.CSR(name); return err == nil })

	_, doc, _ := ls.get(t, sess, "/csrs/"+name)
	if doc.Find(`[data-testid="action-approve"]`).Length() != 1 || doc.Find(`[data-testid="action-deny"]`).Length() != 1 {
		t.Fatal("a pending CSR should offer approve and deny to admin")
	}

	rec := ls.post(t, sess, "/csrs/"+name+"/approve", url.Values{"uid": {ls.uid(t, name)}, "message": {"looks right"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("approve: status %d: %s", rec.Code, rec.Body.String())
	}
	waitFor(t, "the signer to issue", 15*time.Second, func() bool {
		c, err := ls.cache.CSR(name)
		return err == nil && len(c.Status.Certificate) > 0
	})
	c, _ := ls.cache.CSR(name)
	if msg := c.Status.Conditions[0].Message; !strings.Contains(msg, "admin") || !strings.Contains(msg, "looks right") {
		t.Errorf("condition message %q should name the user and keep their text", msg)
	}
	code, doc, _ := ls.get(t, sess, "/csrs/"+name)
	if code != http.StatusOK || doc.Find(`[data-testid="issued-certificate"]`).Length() != 1 {
		t.Fatalf("detail after issue: status %d, issued section %d", code, doc.Find(`[data-testid="issued-certificate"]`).Length())
	}
	if doc.Find(`[data-testid="action-approve"]`).Length() != 0 {
		t.Error("a decided CSR must not offer approve again")
	}

	rec = ls.post(t, sess, "/csrs/"+name+"/deny", url.Values{"uid": {ls.uid(t, name)}})
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "already") {
		t.Fatalf("deny after approve: status %d, want 409 saying it is already decided", rec.Code)
	}
}

func TestApproverIsRefusedForAnotherSigner(t *testing.T) {
	ls := newLiveServer(t, testcluster.Approver, false)
	sess := ls.login(t)
	name := testcluster.CreateCSR(t, testcluster.CSR{Signer: "example.com/custom"})
	waitFor(t, "the cache to see the new CSR", 10*time.Second, func() bool { _, err := ls.cache.CSR(name); return err == nil })

	_, doc, _ := ls.get(t, sess, "/csrs/"+name)
	if doc.Find(`[data-testid="action-approve"]`).Length() != 0 {
		t.Error("approver may not approve for example.com/custom: no button expected")
	}
	rec := ls.post(t, sess, "/csrs/"+name+"/approve", url.Values{"uid": {ls.uid(t, name)}})
	if rec.Code != http.StatusForbidden {
		t.Fatalf("forged approve: status %d, want 403", rec.Code)
	}
}
