//go:build integration

package handlers

import (
	"bytes"
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// issueSigner is the custom signer of these tests' CSRs: no controller
// signs for it, so only an upload gives them a certificate.
const issueSigner = "example.com/helper-signer"

// newIssueServer is a live console as cfg (shown as identity) that writes
// uploaded certificates as that identity.
func newIssueServer(t *testing.T, cfg *rest.Config, identity string, readOnly bool) *liveServer {
	t.Helper()
	return newLiveServerWith(t, cfg, identity, readOnly, func(d *Deps) { d.Issuer = mustWriter(t, cfg) })
}

// issueCSR is one of these tests' CSRs as the API server holds it.
type issueCSR struct {
	name string
	key  any // the request's public key, to issue certificates for
}

// createIssueCSR creates a CSR of issueSigner (suffix tells a test's CSRs
// apart) and, per state, approves or denies it through the /approval
// subresource as admin, then waits for ls's cache to show that.
func createIssueCSR(t *testing.T, ls *liveServer, suffix, state string) issueCSR {
	t.Helper()
	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: suffix, Signer: issueSigner})
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ctx := context.Background()
	c, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if state != "pending" {
		cond := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "HelperTest", Message: "approved by the test"}
		if state == "denied" {
			cond.Type = certificatesv1.CertificateDenied
		}
		c.Status.Conditions = append(c.Status.Conditions, cond)
		if _, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, c, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("%s %s: %v", state, name, err)
		}
	}
	waitFor(t, "the cache to show "+name+" "+state, 10*time.Second, func() bool {
		got, err := ls.cache.CSR(name)
		return err == nil && (state == "pending" || len(got.Status.Conditions) > 0)
	})
	return issueCSR{name: name, key: testfixtures.RequestKey(t, c.Spec.Request)}
}

// clientCert is a certificate template fit for the default test CSR's usages
// (client auth, digital signature).
func clientCert() x509.Certificate {
	return x509.Certificate{Subject: pkix.Name{CommonName: "helper"}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
}

// liveCertificate is status.certificate of name as the API server holds it now.
func liveCertificate(t *testing.T, name string) []byte {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	c, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c.Status.Certificate
}

// issueFormOf reads the upload form's binding (uid, resourceVersion) from the
// CSR's page, failing when the page offers no form.
func issueFormOf(t *testing.T, ls *liveServer, sess *http.Cookie, name string) url.Values {
	t.Helper()
	code, doc, _ := ls.get(t, sess, "/csrs/"+name)
	form := doc.Find(`[data-testid="issue-form"]`)
	if code != http.StatusOK || form.Length() != 1 {
		t.Fatalf("%s: status %d, %d upload forms, want 1", name, code, form.Length())
	}
	if action, _ := form.Attr("action"); action != "/csrs/"+name+"/issue" {
		t.Fatalf("form posts to %q", action)
	}
	if enc, _ := form.Attr("enctype"); enc != "multipart/form-data" {
		t.Fatalf("form enctype %q: a file cannot be uploaded without multipart", enc)
	}
	uid, _ := form.Find(`[data-testid="issue-uid"]`).Attr("value")
	rv, _ := form.Find(`[data-testid="issue-rv"]`).Attr("value")
	if uid == "" || rv == "" {
		t.Fatalf("the form is not bound to the object shown: uid %q, resourceVersion %q", uid, rv)
	}
	return url.Values{"uid": {uid}, "resourceVersion": {rv}}
}

// postMultipart sends fields and files the way the browser sends the form
// without JavaScript: multipart, the CSRF token in the _csrf field (csrf
// false leaves it out).
func (ls *liveServer) postMultipart(t *testing.T, sess *http.Cookie, path string, fields url.Values, files map[string][]byte, csrf bool) *httptest.ResponseRecorder {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if csrf {
		fields.Set("_csrf", pageCSRFToken(t, ls.e, withCookie(sess)))
	}
	for k, vs := range fields {
		for _, v := range vs {
			if err := mw.WriteField(k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	for field, content := range files {
		fw, err := mw.CreateFormFile(field, field+".pem")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(content)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, path, &body)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.AddCookie(sess)
	return ls.do(r)
}

func TestIssueUploadWritesTheCertificateAndThePageShowsIt(t *testing.T) {
	ls := newIssueServer(t, testcluster.RestConfig(t, testcluster.Admin), testcluster.Admin, false)
	sess := ls.login(t)
	csr := createIssueCSR(t, ls, "ok", "approved")
	root := testfixtures.NewCA(t, "helper root")
	inter := root.Intermediate(t, "helper intermediate")
	leaf := inter.Issue(t, csr.key, clientCert())

	form := issueFormOf(t, ls, sess, csr.name)
	// The chain as a file (openssl's text around it included), the root as a pasted bundle.
	form.Set("bundle", string(root.PEM))
	chainFile := append(append([]byte("subject=CN = helper\n"), leaf...), inter.PEM...)
	rec := ls.postMultipart(t, sess, "/csrs/"+csr.name+"/issue", form, map[string][]byte{"chain_file": chainFile}, true)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/csrs/"+csr.name {
		t.Fatalf("upload: status %d, Location %q: %.400s", rec.Code, rec.Header().Get("Location"), rec.Body.String())
	}
	if got, want := string(liveCertificate(t, csr.name)), string(leaf)+string(inter.PEM); got != want {
		t.Fatalf("status.certificate on the API server:\n%s\nwant the leaf and the intermediate only:\n%s", got, want)
	}

	r := httptest.NewRequest(http.MethodGet, "/csrs/"+csr.name, nil)
	r.AddCookie(sess)
	for _, c := range rec.Result().Cookies() {
		r.AddCookie(c) // the flash
	}
	page := ls.do(r)
	doc, err := goquery.NewDocumentFromReader(page.Body)
	if err != nil {
		t.Fatal(err)
	}
	issued := doc.Find(`[data-testid="issued-certificate"]`)
	if page.Code != http.StatusOK || issued.Length() != 1 || !strings.Contains(issued.Text(), "CN=helper") || !strings.Contains(issued.Text(), "CN=helper intermediate") {
		t.Fatalf("page after upload: status %d, issued section %q", page.Code, issued.Text())
	}
	if doc.Find(`[data-testid="toast-result"]`).Length() != 1 {
		t.Error("the page after the upload does not confirm it")
	}
	if doc.Find(`[data-testid="issue-form"]`).Length() != 0 || doc.Find(`[data-testid="certificate-download"]`).Length() != 1 {
		t.Error("an issued CSR must offer the download and no further upload")
	}
	// The API server never lets a certificate be replaced; nor does the console.
	again := ls.post(t, sess, "/csrs/"+csr.name+"/issue", url.Values{"uid": form["uid"], "resourceVersion": {"1"}, "chain": {string(leaf)}})
	if again.Code != http.StatusConflict {
		t.Errorf("second upload: status %d, want 409", again.Code)
	}
}

func TestIssueRefusesBadUploadsAndWritesNothing(t *testing.T) {
	ls := newIssueServer(t, testcluster.RestConfig(t, testcluster.Admin), testcluster.Admin, false)
	sess := ls.login(t)
	root := testfixtures.NewCA(t, "helper root")
	stranger := testfixtures.NewCA(t, "unrelated root")
	otherKey := testfixtures.SigningKey().Public()
	expired := clientCert()
	expired.NotBefore, expired.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)

	cases := []struct {
		name   string
		state  string
		chain  func(c issueCSR) string
		bundle string
		status int
		want   string
	}{
		{"garbage", "approved", func(issueCSR) string { return "this is not a certificate at all" }, "", http.StatusUnprocessableEntity, "no PEM CERTIFICATE block"},
		{"private key", "approved", func(issueCSR) string {
			return "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n"
		}, "", http.StatusUnprocessableEntity, "Never upload private keys"},
		{"empty", "approved", func(issueCSR) string { return "  " }, "", http.StatusUnprocessableEntity, "is empty"},
		{"wrong key", "approved", func(issueCSR) string { return string(root.Issue(t, otherKey, clientCert())) }, "", http.StatusUnprocessableEntity, "issued for another key"},
		{"expired", "approved", func(c issueCSR) string { return string(root.Issue(t, c.key, expired)) }, "", http.StatusUnprocessableEntity, "expired at"},
		{"missing usage", "approved", func(c issueCSR) string {
			server := clientCert()
			server.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
			return string(root.Issue(t, c.key, server))
		}, "", http.StatusUnprocessableEntity, "lacks extended key usages the request asks for: client auth"},
		{"bundle does not verify", "approved", func(c issueCSR) string { return string(root.Issue(t, c.key, clientCert())) }, string(stranger.PEM), http.StatusUnprocessableEntity, "does not verify against the CA bundle"},
		{"denied", "denied", func(c issueCSR) string { return string(root.Issue(t, c.key, clientCert())) }, "", http.StatusConflict, "it was denied"},
		{"pending", "pending", func(c issueCSR) string { return string(root.Issue(t, c.key, clientCert())) }, "", http.StatusConflict, "not approved yet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			csr := createIssueCSR(t, ls, strings.ReplaceAll(tc.name, " ", "-"), tc.state)
			form := url.Values{"uid": {ls.uid(t, csr.name)}, "resourceVersion": {csrRV(t, ls, csr.name)}}
			if tc.state == "approved" {
				form = issueFormOf(t, ls, sess, csr.name)
			} else if _, doc, _ := ls.get(t, sess, "/csrs/"+csr.name); doc.Find(`[data-testid="issue-form"]`).Length() != 0 {
				t.Fatalf("a %s CSR offers the upload", tc.state)
			}
			form.Set("chain", tc.chain(csr))
			form.Set("bundle", tc.bundle)
			rec := ls.post(t, sess, "/csrs/"+csr.name+"/issue", form)
			doc, err := goquery.NewDocumentFromReader(rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			msg := doc.Find(`[data-testid="issue-error"]`).Text()
			if rec.Code != tc.status || !strings.Contains(msg, tc.want) {
				t.Fatalf("status %d, error %q; want %d with %q", rec.Code, strings.TrimSpace(msg), tc.status, tc.want)
			}
			if strings.Contains(rec.Body.String(), "MIGHAgEAMBMGByqGSM49") {
				t.Error("the page sends a pasted private key back")
			}
			if got := liveCertificate(t, csr.name); len(got) != 0 {
				t.Fatalf("status.certificate was written: %q", got)
			}
		})
	}
}

// csrRV is the resourceVersion of name as the console's cache shows it.
func csrRV(t *testing.T, ls *liveServer, name string) string {
	t.Helper()
	c, err := ls.cache.CSR(name)
	if err != nil {
		t.Fatal(err)
	}
	return c.ResourceVersion
}

func TestIssueIsBoundToTheObjectAndVersionShown(t *testing.T) {
	ls := newIssueServer(t, testcluster.RestConfig(t, testcluster.Admin), testcluster.Admin, false)
	sess := ls.login(t)
	root := testfixtures.NewCA(t, "helper root")

	// Changed since the page was shown (a label added): refused.
	changed := createIssueCSR(t, ls, "changed", "approved")
	form := issueFormOf(t, ls, sess, changed.name)
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	live, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), changed.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Labels = map[string]string{"touched": "yes"}
	if _, err := cs.CertificatesV1().CertificateSigningRequests().Update(context.Background(), live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	form.Set("chain", string(root.Issue(t, changed.key, clientCert())))
	if rec := ls.post(t, sess, "/csrs/"+changed.name+"/issue", form); rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "changed since you looked") {
		t.Fatalf("stale resourceVersion: status %d", rec.Code)
	}
	if len(liveCertificate(t, changed.name)) != 0 {
		t.Fatal("written on a version nobody reviewed")
	}

	// Replaced under the same name: refused.
	replaced := createIssueCSR(t, ls, "replaced", "approved")
	form = issueFormOf(t, ls, sess, replaced.name)
	newUID := testcluster.RecreateCSR(t, replaced.name, testcluster.CSR{Signer: issueSigner})
	waitFor(t, "the cache to show the new request", 10*time.Second, func() bool {
		c, err := ls.cache.CSR(replaced.name)
		return err == nil && c.UID == newUID
	})
	form.Set("chain", string(root.Issue(t, replaced.key, clientCert())))
	if rec := ls.post(t, sess, "/csrs/"+replaced.name+"/issue", form); rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "was replaced since you looked") {
		t.Fatalf("replaced CSR: status %d", rec.Code)
	}
	if len(liveCertificate(t, replaced.name)) != 0 {
		t.Fatal("written on a replaced request")
	}
}

func TestIssueWithoutSignRightsIsTheAPIServers403(t *testing.T) {
	// May read CSRs and update their status, but sign only for another signer:
	// the CertificateSigning admission plugin refuses the write.
	sa := testcluster.NewServiceAccount(t, "clusterdesk-it-issue-nosign", []rbacv1.PolicyRule{
		{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, ResourceNames: []string{"example.com/another-signer"}, Verbs: []string{"sign"}},
	})
	ls := newIssueServer(t, sa.RestConfig(t), sa.User, false)
	sess := ls.login(t)
	csr := createIssueCSR(t, ls, "nosign", "approved")
	if _, doc, _ := ls.get(t, sess, "/csrs/"+csr.name); doc.Find(`[data-testid="issue-form"]`).Length() != 0 {
		t.Fatal("the page offers the upload to a user who may not sign for " + issueSigner)
	}
	root := testfixtures.NewCA(t, "helper root")
	form := url.Values{"uid": {ls.uid(t, csr.name)}, "resourceVersion": {csrRV(t, ls, csr.name)}, "chain": {string(root.Issue(t, csr.key, clientCert()))}}
	rec := ls.post(t, sess, "/csrs/"+csr.name+"/issue", form)
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	msg := doc.Find(`[data-testid="issue-error"]`).Text()
	if rec.Code != http.StatusForbidden || !strings.Contains(msg, "you may not sign for "+issueSigner) || !strings.Contains(msg, "forbidden") {
		t.Fatalf("status %d, error %q; want 403 with the API server's refusal", rec.Code, strings.TrimSpace(msg))
	}
	if len(liveCertificate(t, csr.name)) != 0 {
		t.Fatal("status.certificate was written without sign rights")
	}
}

func TestIssueRefusesWithoutCSRFAndInReadOnlyMode(t *testing.T) {
	admin := testcluster.RestConfig(t, testcluster.Admin)
	ls := newIssueServer(t, admin, testcluster.Admin, false)
	sess := ls.login(t)
	root := testfixtures.NewCA(t, "helper root")
	csr := createIssueCSR(t, ls, "csrf", "approved")
	form := issueFormOf(t, ls, sess, csr.name)
	form.Set("chain", string(root.Issue(t, csr.key, clientCert())))
	rec := ls.postMultipart(t, sess, "/csrs/"+csr.name+"/issue", form, nil, false)
	if !refusedForCSRF(rec) {
		t.Fatalf("upload without the CSRF token: status %d, want the CSRF refusal", rec.Code)
	}
	if len(liveCertificate(t, csr.name)) != 0 {
		t.Fatal("written without a CSRF token")
	}

	ro := newIssueServer(t, admin, testcluster.Admin, true)
	roSess := ro.login(t)
	if _, doc, _ := ro.get(t, roSess, "/csrs/"+csr.name); doc.Find(`[data-testid="issue-form"]`).Length() != 0 {
		t.Fatal("read-only mode offers the upload")
	}
	rec = ro.postMultipart(t, roSess, "/csrs/"+csr.name+"/issue", form, nil, true)
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "read-only") {
		t.Fatalf("read-only upload: status %d, want 403 naming read-only mode", rec.Code)
	}
	if len(liveCertificate(t, csr.name)) != 0 {
		t.Fatal("written in read-only mode")
	}
}

func TestAuditTrailRecordsCertificateUploads(t *testing.T) {
	ac := newAuditConsole(t, testcluster.Admin, false)
	sess := ac.login(t)
	csr := createIssueCSR(t, ac.liveServer, "audit", "approved")
	root := testfixtures.NewCA(t, "helper root")

	form := issueFormOf(t, ac.liveServer, sess, csr.name)
	form.Set("chain", string(root.Issue(t, testfixtures.SigningKey().Public(), clientCert())))
	if rec := ac.post(t, sess, "/csrs/"+csr.name+"/issue", form); rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("wrong key: status %d", rec.Code)
	}
	form.Set("chain", string(root.Issue(t, csr.key, clientCert())))
	if rec := ac.post(t, sess, "/csrs/"+csr.name+"/issue", form); rec.Code != http.StatusSeeOther {
		t.Fatalf("upload: status %d: %.300s", rec.Code, rec.Body.String())
	}
	recs := ac.records(t, csr.name)
	if len(recs) != 2 {
		t.Fatalf("%d audit records for %s, want the refused and the written upload", len(recs), csr.name)
	}
	refused, written := recs[0], recs[1]
	if refused.Verb != "issue" || refused.Result == audit.ResultOK || !strings.Contains(refused.Error, "another key") || refused.Diff != "" {
		t.Errorf("refused upload: %+v", refused)
	}
	if written.Verb != "issue" || written.Result != audit.ResultOK || written.User != testcluster.Admin || written.UID == "" ||
		written.RVBefore == "" || written.RVAfter == "" || written.RVBefore == written.RVAfter || !strings.Contains(written.Diff, "certificate:") {
		t.Errorf("written upload: %+v", written)
	}
}

func TestIssueBoundsTheUpload(t *testing.T) {
	ls := newIssueServer(t, testcluster.RestConfig(t, testcluster.Admin), testcluster.Admin, false)
	sess := ls.login(t)
	csr := createIssueCSR(t, ls, "limit", "approved")
	form := issueFormOf(t, ls, sess, csr.name)

	// Over the route's body limit (maxBody, 1 MiB): refused before the form is parsed.
	rec := ls.postMultipart(t, sess, "/csrs/"+csr.name+"/issue", form, map[string][]byte{"chain_file": bytes.Repeat([]byte("a"), 3<<19)}, true)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("1.5 MiB upload: status %d, want 413", rec.Code)
	}
	// Within the body limit, over the certificate's own (issue.MaxChainBytes): a clear 422.
	rec = ls.postMultipart(t, sess, "/csrs/"+csr.name+"/issue", form, map[string][]byte{"chain_file": bytes.Repeat([]byte("a"), 100<<10)}, true)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "at most 65536 are accepted") {
		t.Fatalf("100 KiB certificate: status %d, want 422 naming the limit", rec.Code)
	}
	if len(liveCertificate(t, csr.name)) != 0 {
		t.Fatal("an oversized upload was written")
	}
}
