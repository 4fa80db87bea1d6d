//go:build integration

package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

func (ls *liveServer) waitCached(t *testing.T, names ...string) {
	t.Helper()
	waitFor(t, "the cache to see "+strings.Join(names, ", "), 10*time.Second, func() bool {
		for _, n := range names {
			if _, err := ls.cache.CSR(n); err != nil {
				return false
			}
		}
		return true
	})
}

// bulk posts the bulk form for the named CSRs, each with its UID as the
// console shows it, and parses the answer.
func (ls *liveServer) bulk(t *testing.T, sess *http.Cookie, action string, names ...string) (int, *goquery.Document) {
	t.Helper()
	var refs []string
	for _, n := range names {
		refs = append(refs, ls.uid(t, n)+"/"+n)
	}
	return ls.bulkRefs(t, sess, action, refs...)
}

// bulkRefs posts the bulk form with selection values ("<uid>/<name>") as given.
func (ls *liveServer) bulkRefs(t *testing.T, sess *http.Cookie, action string, refs ...string) (int, *goquery.Document) {
	t.Helper()
	rec := ls.post(t, sess, "/csrs/bulk", url.Values{"names": refs, "action": {action}, "message": {"bulk from the integration test"}})
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, doc
}

func bulkResult(doc *goquery.Document, name string) (ok string, text string) {
	s := doc.Find(`[data-testid="bulk-result"][data-name="` + name + `"]`)
	return s.AttrOr("data-ok", "missing"), strings.Join(strings.Fields(s.Text()), " ")
}

var apiClient = testcluster.CSR{Signer: certificatesv1.KubeAPIServerClientSignerName, CommonName: "it-user", Organizations: []string{"it"}}

// alone is s.With(suffix) with a CN of its own. Pending requests of one
// signer, subject and requester are a retry storm, which the queue shows as
// one group row without selection boxes; tests that select requests one by
// one give each its own subject.
func alone(s testcluster.CSR, suffix string) testcluster.CSR {
	s = s.With(suffix)
	s.CommonName += "-" + suffix
	return s
}

func TestBulkApproveReportsTheOneAlreadyDenied(t *testing.T) {
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	a, b, denied := testcluster.CreateCSR(t, apiClient.With("a")), testcluster.CreateCSR(t, apiClient.With("b")), testcluster.CreateCSR(t, apiClient.With("denied"))
	ls.waitCached(t, a, b, denied)
	if rec := ls.post(t, sess, "/csrs/"+denied+"/deny", url.Values{"uid": {ls.uid(t, denied)}, "message": {"not this one"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("deny: status %d", rec.Code)
	}

	code, doc := ls.bulk(t, sess, "approve", a, denied, b)
	if code != http.StatusOK {
		t.Fatalf("bulk approve with a partial failure: status %d", code)
	}
	for _, n := range []string{a, b} {
		if ok, text := bulkResult(doc, n); ok != "true" {
			t.Errorf("%s: result %s %q, want approved", n, ok, text)
		}
	}
	if ok, text := bulkResult(doc, denied); ok != "false" || !strings.Contains(text, "already denied") {
		t.Errorf("%s: result %s %q, want a failure saying it is already denied", denied, ok, text)
	}
	if s := strings.Join(strings.Fields(doc.Find(`[data-testid="bulk-summary"]`).Text()), " "); !strings.Contains(s, "Approved 2 of 3") {
		t.Errorf("summary %q", s)
	}

	waitFor(t, "the signer to issue both", 20*time.Second, func() bool {
		for _, n := range []string{a, b} {
			if c, err := ls.cache.CSR(n); err != nil || len(c.Status.Certificate) == 0 {
				return false
			}
		}
		return true
	})
	c, _ := ls.cache.CSR(denied)
	if len(c.Status.Conditions) != 1 || c.Status.Conditions[0].Type != certificatesv1.CertificateDenied {
		t.Errorf("the denied CSR must stay denied only: %+v", c.Status.Conditions)
	}

	// The queue shows them where they now belong, and the certificate downloads.
	_, issued, _ := ls.get(t, sess, "/csrs?state=issued&q="+url.QueryEscape(a))
	if issued.Find(`[data-testid="list-row"][data-name="`+a+`"]`).Length() != 1 {
		t.Error("the approved CSR is under Issued")
	}
	rec := ls.do(newGet("/csrs/"+a+"/certificate", sess))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), "-----BEGIN CERTIFICATE-----") ||
		!strings.Contains(rec.Header().Get("Content-Disposition"), "attachment") {
		t.Errorf("certificate download: status %d, %q", rec.Code, rec.Header().Get("Content-Disposition"))
	}
	if rec := ls.do(newGet("/csrs/"+denied+"/certificate", sess)); rec.Code != http.StatusNotFound {
		t.Errorf("a denied CSR has nothing to download: status %d", rec.Code)
	}
}

func TestApproverMayApproveClientButNotKubeletServing(t *testing.T) {
	ls := newLiveServer(t, testcluster.Approver, false)
	sess := ls.login(t)
	client := testcluster.CreateCSR(t, apiClient.With("client"))
	serving := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "serving",
		Signer: certificatesv1.KubeletServingSignerName, CommonName: "system:node:it-worker", Organizations: []string{"system:nodes"},
		DNSNames: []string{"it-worker"}, IPs: []string{"10.0.0.99"},
		Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth},
	})
	ls.waitCached(t, client, serving)

	_, doc, _ := ls.get(t, sess, "/csrs?state=pending")
	if doc.Find(`[data-testid="row-select"][value="`+ls.uid(t, client)+"/"+client+`"]`).Length() != 1 {
		t.Error("the approver may select the kube-apiserver-client CSR")
	}
	if doc.Find(`[data-testid="list-row"][data-name="`+serving+`"] [data-testid="row-select"]`).Length() != 0 {
		t.Error("the approver may not select the kubelet-serving CSR")
	}
	// The checks flag the serving request: requested by admin, not by the node.
	row := doc.Find(`[data-testid="list-row"][data-name="` + serving + `"]`)
	if row.Find(`[data-testid="finding"][data-check="requester"]`).Length() != 1 {
		t.Errorf("the serving CSR's row shows the requester finding: %q", strings.Join(strings.Fields(row.Find(`[data-testid="row-checks"]`).Text()), " "))
	}
	_, detail, _ := ls.get(t, sess, "/csrs/"+serving)
	if detail.Find(`[data-testid="action-approve"]`).Length() != 0 {
		t.Error("no approve button on the kubelet-serving CSR for the approver")
	}
	// The approver may not read Nodes: the Node check, loaded after the page
	// (csr_node.go), says the Node is unknown.
	_, nodeCheck, _ := ls.get(t, sess, "/csrs/"+serving+"/node-check")
	if nodeCheck.Find(`[data-testid="csr-checks"] [data-testid="finding"][data-check="node-unknown"]`).Length() != 1 {
		t.Error("the Node check says the Node is unknown")
	}

	// A forged bulk decision over both: the client CSR is approved, the
	// serving one is refused by the API server, and the refusal is shown.
	code, res := ls.bulk(t, sess, "approve", client, serving)
	if code != http.StatusOK {
		t.Fatalf("bulk: status %d", code)
	}
	if ok, text := bulkResult(res, client); ok != "true" {
		t.Errorf("client: %s %q", ok, text)
	}
	ok, text := bulkResult(res, serving)
	if ok != "false" || !strings.Contains(text, "forbidden") || !strings.Contains(text, certificatesv1.KubeletServingSignerName) {
		t.Errorf("serving: %s %q, want the API server's refusal naming the signer", ok, text)
	}
	c, _ := ls.cache.CSR(serving)
	if len(c.Status.Conditions) != 0 {
		t.Errorf("the refused CSR is untouched: %+v", c.Status.Conditions)
	}
	// The single-CSR route refuses as well, with the API server's message.
	rec := ls.post(t, sess, "/csrs/"+serving+"/approve", url.Values{"uid": {ls.uid(t, serving)}})
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "forbidden") {
		t.Errorf("single approve: status %d", rec.Code)
	}
}

func TestAuditorSeesNoDecisionsAndIsRefused(t *testing.T) {
	ls := newLiveServer(t, testcluster.Auditor, false)
	sess := ls.login(t)
	// (The API server itself refuses system:masters for this signer, so the
	// dangerous request here is a client certificate named like a node.)
	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "pending", Signer: certificatesv1.KubeAPIServerClientSignerName, CommonName: "system:node:it-sneaky", Organizations: []string{"it"}})
	ls.waitCached(t, name)

	code, doc, _ := ls.get(t, sess, "/csrs")
	if code != http.StatusOK || doc.Find(`[data-testid="list-row"][data-name="`+name+`"]`).Length() != 1 {
		t.Fatalf("auditor's queue: status %d", code)
	}
	if doc.Find(`[data-testid="bulk-form"]`).Length() != 0 || doc.Find(`[data-testid="row-select"]`).Length() != 0 ||
		doc.Find(`form[method="post"][action*="/csrs"]`).Length() != 0 {
		t.Error("the auditor sees no approve or deny controls on the queue")
	}
	_, detail, _ := ls.get(t, sess, "/csrs/"+name)
	if detail.Find(`[data-testid^="action-"]`).Length() != 0 {
		t.Error("the auditor sees no approve or deny buttons on the CSR")
	}
	if detail.Find(`[data-testid="finding"][data-check="impersonates-node"][data-tone="error"]`).Length() != 1 {
		t.Error("the detail page warns that the certificate would act as a node")
	}

	code, res := ls.bulk(t, sess, "approve", name)
	if code != http.StatusForbidden {
		t.Errorf("forged bulk approve: status %d, want 403", code)
	}
	if ok, text := bulkResult(res, name); ok != "false" || !strings.Contains(text, "forbidden") {
		t.Errorf("the refusal is reported: %s %q", ok, text)
	}
	if rec := ls.post(t, sess, "/csrs/"+name+"/approve", url.Values{"uid": {ls.uid(t, name)}}); rec.Code != http.StatusForbidden {
		t.Errorf("forged approve: status %d, want 403", rec.Code)
	}
	c, _ := ls.cache.CSR(name)
	if len(c.Status.Conditions) != 0 {
		t.Errorf("nothing was decided: %+v", c.Status.Conditions)
	}
}
