package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/handlers/csrs"
	"github.com/clusterdesk/clusterdesk/handlers/internal/livetest"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// csrCluster is a synced cache holding only CSRs.
type csrCluster struct {
	emptyCluster
	items map[string]*certificatesv1.CertificateSigningRequest
	order []*certificatesv1.CertificateSigningRequest
}

func newCSRCluster(items ...*certificatesv1.CertificateSigningRequest) *csrCluster {
	c := &csrCluster{items: map[string]*certificatesv1.CertificateSigningRequest{}, order: items}
	for _, it := range items {
		c.items[it.Name] = it
	}
	return c
}

func csrKindOf() kube.Kind { return kube.AllKinds()[0] }

func (c *csrCluster) Ready() bool { return true }
func (c *csrCluster) Kind(id kube.KindID) (kube.Kind, bool) {
	return csrKindOf(), id == kube.CSRs
}
func (c *csrCluster) Statuses() []kube.KindStatus {
	return []kube.KindStatus{{Kind: csrKindOf(), State: kube.StateSynced, Count: len(c.order)}}
}
func (c *csrCluster) CSRs() ([]*certificatesv1.CertificateSigningRequest, error) { return c.order, nil }
func (c *csrCluster) CSR(name string) (*certificatesv1.CertificateSigningRequest, error) {
	if it, ok := c.items[name]; ok {
		return it, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, name)
}
func (c *csrCluster) Meta(_ kube.KindID, name string) (metav1.Object, error) { return c.CSR(name) }
func (c *csrCluster) Object(_ kube.KindID, name string) (runtime.Object, error) {
	it, err := c.CSR(name)
	if err != nil {
		return nil, err
	}
	return it.DeepCopy(), nil
}

// signerAccess lets the user read everything and decide for some signers.
type signerAccess struct{ signers map[string]bool }

func (a signerAccess) Can(_ context.Context, verb, _, resource, _, name string) (bool, error) {
	switch {
	case verb == "approve" && resource == "signers":
		return a.signers[name], nil
	case verb == "update" || verb == "delete":
		return len(a.signers) > 0, nil
	}
	return true, nil
}

// scriptedWriter answers DecideCSR with a per-name error.
type scriptedWriter struct {
	mu      sync.Mutex
	errs    map[string]error
	decided []string
	uids    []types.UID // the UID each decided call carried
	msgs    []string
	approve map[string]bool // name → approved (false: denied)
}

func (w *scriptedWriter) DecideCSR(_ context.Context, name string, uid types.UID, approve bool, _, message string) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.errs[name]; err != nil {
		return nil, err
	}
	if w.approve == nil {
		w.approve = map[string]bool{}
	}
	w.approve[name] = approve
	w.decided = append(w.decided, name)
	w.uids = append(w.uids, uid)
	w.msgs = append(w.msgs, message)
	return []string{"a warning for " + name}, nil
}

// fakeCSR, uidFor: CSRs as the API server would hold them, shared with the
// live updates' tests (handlers/internal/livetest).
var (
	fakeCSR = livetest.CSR
	uidFor  = livetest.UID
)

// ref is the bulk form's selection value of the fake CSR name.
func ref(name string) string { return livetest.Ref(name) }

type csrTestServer struct {
	testServer
	writer *scriptedWriter
	queue  *csrqueue.Queue
}

// newCSRConsole is a console in local mode on cluster as "tester", whose
// writer decides as the test scripts it (csrTestServer.writer).
func newCSRConsole(t testing.TB, cluster Cluster, access Access, opts ...consoleOption) *csrTestServer {
	t.Helper()
	ts := &csrTestServer{writer: &scriptedWriter{errs: map[string]error{}}}
	ts.build(t, Deps{Cluster: cluster, Access: access, Writer: ts.writer, User: "tester"}, opts...)
	return ts
}

// newCSRTestServer is newCSRConsole with the CSR queue's caches of its own
// (csrTestServer.queue).
func newCSRTestServer(t testing.TB, cluster Cluster, access Access, readOnly bool, opts ...consoleOption) *csrTestServer {
	t.Helper()
	queue := csrqueue.New(cluster)
	opts = append([]consoleOption{readOnlyConsole(readOnly), func(d *Deps) { d.CSRQueue = queue }}, opts...)
	ts := newCSRConsole(t, cluster, access, opts...)
	ts.queue = queue
	return ts
}

const apiClientSigner = certificatesv1.KubeAPIServerClientSignerName

func TestCSRQueueHandler(t *testing.T) {
	now := time.Now()
	cluster := newCSRCluster(
		fakeCSR(t, "p1", apiClientSigner, "ann", now.Add(-time.Hour)),
		fakeCSR(t, "p2", "example.com/custom", "bob", now.Add(-2*time.Hour)),
		fakeCSR(t, "done", apiClientSigner, "eve", now.Add(-3*time.Hour), certificatesv1.CertificateDenied),
	)
	ts := newCSRTestServer(t, cluster, signerAccess{signers: map[string]bool{apiClientSigner: true}}, false)
	sess := ts.login(t)

	rec, doc := ts.request(t, sess, http.MethodGet, "/csrs", nil, false)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	names := doc.Find(`[data-testid="list-row"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-name", "") })
	if strings.Join(names, ",") != "p2,p1,done" {
		t.Errorf("queue order %v", names)
	}
	boxes := doc.Find(`[data-testid="row-select"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("value", "") })
	if strings.Join(boxes, ",") != ref("p1") {
		t.Errorf("only p1 (a signer the user may decide, pending) is selectable: %v", boxes)
	}
	if doc.Find(`[data-testid="bulk-delete"]`).Length() != 1 || doc.Find(`[data-testid="cleanup-link"]`).Length() != 1 {
		t.Error(`"Delete selected" or "Clean up…" missing for a user who may delete CSRs`)
	}
	// On a decided state's tab the boxes tick requests for deletion.
	_, denied := ts.request(t, sess, http.MethodGet, "/csrs?state=denied", nil, false)
	if got := denied.Find(`[data-testid="row-select"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("value", "") }); strings.Join(got, ",") != ref("done") {
		t.Errorf("the denied tab ticks the denied request for deletion: %v", got)
	}
	if doc.Find(`[data-testid="bulk-form"]`).Length() != 1 {
		t.Error("bulk form missing")
	}

	rec, _ = ts.request(t, sess, http.MethodGet, "/csrs?state=denied", nil, true)
	body := rec.Body.String()
	if strings.Contains(body, "<html") || !strings.Contains(body, `data-name="done"`) || strings.Contains(body, `data-name="p1"`) {
		t.Errorf("htmx gets the filtered fragment only")
	}
	if !strings.Contains(strings.Join(rec.Header().Values("Vary"), ","), "HX-Request") {
		t.Errorf("Vary: HX-Request missing: %v", rec.Header())
	}

	// The auditor's view: no form, no checkboxes.
	ro := newCSRTestServer(t, cluster, signerAccess{}, false)
	_, doc = ro.request(t, ro.login(t), http.MethodGet, "/csrs", nil, false)
	if doc.Find(`[data-testid="bulk-form"]`).Length() != 0 || doc.Find(`[data-testid="row-select"]`).Length() != 0 {
		t.Error("a user who may decide nothing sees no bulk controls")
	}
}

func TestCSRBulkHandler(t *testing.T) {
	now := time.Now()
	cluster := newCSRCluster(
		fakeCSR(t, "a", apiClientSigner, "ann", now.Add(-time.Hour)),
		fakeCSR(t, "b", apiClientSigner, "bob", now.Add(-time.Hour)),
		fakeCSR(t, "c", apiClientSigner, "cy", now.Add(-time.Hour)),
	)
	ts := newCSRTestServer(t, cluster, signerAccess{signers: map[string]bool{apiClientSigner: true}}, false)
	sess := ts.login(t)
	gr := schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}
	ts.writer.errs["b"] = apierrors.NewConflict(gr, "b", fmt.Errorf("it is already denied; approval and denial are permanent"))

	rec, doc := ts.request(t, sess, http.MethodPost, "/csrs/bulk", url.Values{
		"names": {ref("a"), ref("b"), ref("c"), ref("a")}, "action": {"approve"}, "message": {"batch"}, "return": {"state=pending"},
	}, false)
	if rec.Code != http.StatusOK {
		t.Fatalf("partial success: status %d", rec.Code)
	}
	results := doc.Find(`[data-testid="bulk-result"]`)
	if results.Length() != 3 {
		t.Fatalf("%d results, want one per distinct name", results.Length())
	}
	failed := doc.Find(`[data-testid="bulk-result"][data-ok="false"]`)
	if failed.AttrOr("data-name", "") != "b" || !strings.Contains(failed.Text(), "already denied") {
		t.Errorf("the failure names the CSR and the API server's reason: %q", failed.Text())
	}
	if len(ts.writer.decided) != 2 || !strings.Contains(ts.writer.msgs[0], "Approved by tester via clusterdesk: batch") {
		t.Errorf("decided %v with %v", ts.writer.decided, ts.writer.msgs)
	}
	for i, n := range ts.writer.decided {
		if ts.writer.uids[i] != uidFor(n) {
			t.Errorf("%s was decided with UID %q, want the one selected, %q", n, ts.writer.uids[i], uidFor(n))
		}
	}
	if doc.Find(`[data-testid="row-select"][value="`+ref("b")+`"]`).AttrOr("checked", "none") == "none" {
		t.Error("the failed CSR stays selected")
	}
	if doc.Find(`[data-testid="bulk-message"]`).AttrOr("value", "") != "batch" {
		t.Error("the message stays in the form after a failure")
	}
	if !strings.Contains(doc.Find(`[data-testid="bulk-result"][data-name="a"]`).Text(), "a warning for a") {
		t.Error("API server warnings are shown per CSR")
	}
	if doc.Find(`[data-testid="tab-pending"]`).AttrOr("aria-current", "") != "page" {
		t.Error("the result page returns to the view the form came from")
	}

	// Everything refused alike: the status says so.
	ts.writer.errs["a"] = apierrors.NewForbidden(gr, "a", fmt.Errorf("no"))
	ts.writer.errs["b"] = apierrors.NewForbidden(gr, "b", fmt.Errorf("no"))
	rec, _ = ts.request(t, sess, http.MethodPost, "/csrs/bulk", url.Values{"names": {ref("a"), ref("b")}, "action": {"deny"}}, false)
	if rec.Code != http.StatusForbidden {
		t.Errorf("all forbidden: status %d, want 403", rec.Code)
	}

	// Refused forms write nothing, which only shows if a write could succeed.
	ts.writer.errs = map[string]error{}
	cases := []struct {
		name string
		form url.Values
		code int
		want string
	}{
		{"nothing selected", url.Values{"action": {"approve"}}, http.StatusBadRequest, "Nothing selected"},
		{"unknown action", url.Values{"names": {ref("a")}, "action": {"delete"}}, http.StatusBadRequest, "Approve selected"},
		{"message too long", url.Values{"names": {ref("a")}, "action": {"deny"}, "message": {strings.Repeat("x", csrs.MaxReasonLen+1)}}, http.StatusBadRequest, "at most"},
		{"a name without its UID", url.Values{"names": {ref("a"), "b"}, "action": {"approve"}}, http.StatusBadRequest, "does not say which request"},
		{"a malformed UID", url.Values{"names": {"not-a-uid/a"}, "action": {"approve"}}, http.StatusBadRequest, "does not carry the UID"},
		// A name no request has (made up, or deleted since): the whole selection is refused, a too.
		{"a request that is not there", url.Values{"names": {ref("a"), ref("ghost")}, "action": {"approve"}}, http.StatusConflict, "no request named"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(ts.writer.decided)
			rec, _ := ts.request(t, sess, http.MethodPost, "/csrs/bulk", tc.form, false)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("status %d, want %d mentioning %q", rec.Code, tc.code, tc.want)
			}
			if len(ts.writer.decided) != before {
				t.Errorf("a refused form decided %v", ts.writer.decided[before:])
			}
		})
	}
}

func TestCSRCertificateDownload(t *testing.T) {
	issued := fakeCSR(t, "issued", apiClientSigner, "ann", time.Now(), certificatesv1.CertificateApproved)
	issued.Status.Certificate = []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
	cluster := newCSRCluster(issued, fakeCSR(t, "pending", apiClientSigner, "bob", time.Now()))
	ts := newCSRTestServer(t, cluster, signerAccess{}, false)
	sess := ts.login(t)

	rec, _ := ts.request(t, sess, http.MethodGet, "/csrs/issued/certificate", nil, false)
	if rec.Code != http.StatusOK || rec.Body.String() != string(issued.Status.Certificate) {
		t.Fatalf("status %d body %q", rec.Code, rec.Body.String())
	}
	if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename="issued.crt"` {
		t.Errorf("Content-Disposition = %q", cd)
	}
	if rec, _ := ts.request(t, sess, http.MethodGet, "/csrs/pending/certificate", nil, false); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "no issued certificate") {
		t.Errorf("not issued: status %d", rec.Code)
	}
	if rec, _ := ts.request(t, sess, http.MethodGet, "/csrs/ghost/certificate", nil, false); rec.Code != http.StatusNotFound {
		t.Errorf("unknown CSR: status %d", rec.Code)
	}
	denied := newCSRTestServer(t, cluster, denyAll{}, false)
	if rec, _ := denied.request(t, denied.login(t), http.MethodGet, "/csrs/issued/certificate", nil, false); rec.Code != http.StatusForbidden {
		t.Errorf("a user who may not read CSRs: status %d, want 403", rec.Code)
	}

	_, doc := ts.request(t, sess, http.MethodGet, "/csrs/issued", nil, false)
	if doc.Find(`[data-testid="certificate-download"]`).AttrOr("href", "") != "/csrs/issued/certificate" || doc.Find(`[data-testid="csr-checks"]`).Length() != 1 {
		t.Error("the detail page links the download and shows the checks")
	}
}

// BenchmarkCSRQueue measures GET /csrs through the whole handler stack
// (session, access checks, presenter, templ render) over 5,000 CSRs with real
// PKCS#10 requests: 60% pending over three signers, the rest decided.
// "warm" is the steady state (decoded requests remembered); "cold" decodes
// and verifies every request, as the first view after a start does.
func BenchmarkCSRQueue(b *testing.B) {
	const n = 5000
	now := time.Now()
	signers := []string{apiClientSigner, certificatesv1.KubeAPIServerClientKubeletSignerName, "example.com/custom"}
	var items []*certificatesv1.CertificateSigningRequest
	for i := range n {
		var conds []certificatesv1.RequestConditionType
		switch i % 10 {
		case 6, 7:
			conds = []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved}
		case 8:
			conds = []certificatesv1.RequestConditionType{certificatesv1.CertificateDenied}
		case 9:
			conds = []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateFailed}
		}
		c := fakeCSR(b, fmt.Sprintf("csr-%05d", i), signers[i%3], fmt.Sprintf("user-%d", i%700), now.Add(-time.Duration(i)*time.Minute), conds...)
		if i%10 == 7 {
			c.Status.Certificate = []byte("x")
		}
		items = append(items, c)
	}
	ts := newCSRTestServer(b, newCSRCluster(items...), signerAccess{signers: map[string]bool{apiClientSigner: true}}, false)
	sess := ts.login(b)
	run := func(b *testing.B, cold bool) {
		b.ReportAllocs()
		var size int
		for b.Loop() {
			if cold {
				ts.queue.ForgetDecodes()
			}
			r := httptest.NewRequest(http.MethodGet, "/csrs", nil)
			r.AddCookie(sess)
			rec := ts.do(r)
			if rec.Code != http.StatusOK {
				b.Fatalf("status %d", rec.Code)
			}
			size = rec.Body.Len()
		}
		b.ReportMetric(float64(size), "html-bytes")
	}
	b.Run("warm", func(b *testing.B) { run(b, false) })
	b.Run("cold", func(b *testing.B) { run(b, true) })
}
