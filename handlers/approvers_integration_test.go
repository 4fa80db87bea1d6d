//go:build integration

package handlers

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// TestWhoApprovesASignerOnTheDevcluster reads the devcluster's real RBAC
// through the page: the approver user (clusterdesk:approver, approve on
// kube-apiserver-client only) and the OIDC approvers' group may approve
// kube-apiserver-client requests; kubelet-serving requests nobody is granted
// in particular (only cluster-admin's administrators may), which the page
// says; the CSR page loads the panel
// after itself; an auditor, who may not list RBAC, is told so; a bad signer is
// a 400 before any read.
func TestWhoApprovesASignerOnTheDevcluster(t *testing.T) {
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)

	code, doc, _ := ls.get(t, sess, urls.CSRApprovers(certificatesv1.KubeAPIServerClientSignerName))
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	approvers := doc.Find(`[data-testid="approver"]`).Map(func(_ int, s *goquery.Selection) string {
		return strings.Join(strings.Fields(s.Text()), " ")
	})
	for _, want := range []string{"User approver via clusterdesk:approver", "Group oidc:clusterdesk-approvers via clusterdesk:approver", "Group system:masters (bypasses authorization) via cluster-admin"} {
		if !containsString(approvers, want) {
			t.Errorf("approvers of kube-apiserver-client %q lack %q", approvers, want)
		}
	}
	if doc.Find(`[data-testid="approvers-nobody"], [data-testid="approvers-only-admins"]`).Length() != 0 {
		t.Error("kube-apiserver-client is said to have no approver of its own")
	}

	serving := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "serving", Signer: certificatesv1.KubeletServingSignerName,
		Usages: []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth, certificatesv1.UsageDigitalSignature}})
	ls.waitCached(t, serving)
	code, doc, _ = ls.get(t, sess, urls.CSRApprovers(certificatesv1.KubeletServingSignerName))
	if code != http.StatusOK || !strings.Contains(doc.Find(`[data-testid="approvers-only-admins"]`).Text(), "will stay pending") {
		t.Errorf("kubelet-serving: status %d, no 'will stay pending' warning: %q", code, doc.Find(`[data-testid="approvers"]`).Text())
	}
	if doc.Find(`[data-testid="approvers-pending"]`).Length() != 1 {
		t.Error("kubelet-serving: the pending requests are not linked")
	}

	// The CSR page leaves a placeholder loading the answer after itself; the
	// fragment is the panel alone.
	_, page, _ := ls.get(t, sess, "/csrs/"+serving)
	href, _ := page.Find(`[data-testid="approvers-placeholder"]`).Attr("hx-get")
	if href != urls.CSRApprovers(certificatesv1.KubeletServingSignerName) {
		t.Fatalf("the CSR page's approvers placeholder loads %q", href)
	}
	r := httptest.NewRequest(http.MethodGet, href, nil)
	r.AddCookie(sess)
	r.Header.Set("HX-Request", "true")
	rec := ls.do(r)
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "<html") || !strings.Contains(rec.Body.String(), `data-testid="approvers-only-admins"`) {
		t.Errorf("fragment: status %d, %d bytes, whole page or no warning", rec.Code, rec.Body.Len())
	}

	// The overview flags kubelet-serving and not kube-apiserver-client.
	_, over, _ := ls.get(t, sess, urls.CSRApproversRoute)
	servingRow := over.Find(`[data-testid="signer-row"][data-signer="` + certificatesv1.KubeletServingSignerName + `"]`)
	clientRow := over.Find(`[data-testid="signer-row"][data-signer="` + certificatesv1.KubeAPIServerClientSignerName + `"]`)
	if servingRow.Find(`[data-testid="signer-only-admins"]`).Length() != 1 || clientRow.Length() != 1 || clientRow.Find(`[data-testid^="signer-"]`).Length() != 0 {
		t.Errorf("overview: kubelet-serving row %q, kube-apiserver-client row %q", servingRow.Text(), clientRow.Text())
	}

	for _, bad := range []string{urls.CSRApproversRoute + "?signer=", urls.CSRApprovers("no-slash"), urls.CSRApprovers("a/b c"), urls.CSRApprovers("a/" + strings.Repeat("x", 600))} {
		if code, _, _ := ls.get(t, sess, bad); code != http.StatusBadRequest {
			t.Errorf("GET %s: status %d, want 400", bad[:min(len(bad), 60)], code)
		}
	}

	auditor := newLiveServer(t, testcluster.Auditor, true)
	code, doc, _ = auditor.get(t, auditor.login(t), urls.CSRApprovers(certificatesv1.KubeAPIServerClientSignerName))
	if code != http.StatusOK || !strings.Contains(doc.Find(`[data-testid="approvers-unreadable"]`).Text(), "You may not list ClusterRoles") ||
		doc.Find(`[data-testid="approver"]`).Length() != 0 {
		t.Errorf("auditor: status %d, unreadable %q", code, doc.Find(`[data-testid="approvers-unreadable"]`).Text())
	}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
