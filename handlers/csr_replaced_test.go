package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// A decision the writer reports as made on a replaced CSR is a 409 page that
// says so and lays out the new request, whose buttons carry its own UID; the
// bulk form gives it its own refused line and does not tick it again.
func TestCSRDecisionOnAReplacedCSR(t *testing.T) {
	now := time.Now()
	old := fakeCSR(t, "x", apiClientSigner, "ann", now)
	replacement := fakeCSR(t, "x", apiClientSigner, "mallory", now)
	replacement.UID = "11111111-2222-4333-8444-555555555555"
	gr := schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}
	replaced := &kube.ReplacedError{Name: "x", Seen: old.UID, Current: replacement,
		Err: apierrors.NewConflict(gr, "x", fmt.Errorf("Precondition failed"))}

	ts := newCSRTestServer(t, newCSRCluster(old, fakeCSR(t, "y", apiClientSigner, "bob", now)), signerAccess{signers: map[string]bool{apiClientSigner: true}}, false)
	sess := ts.login(t)
	ts.writer.errs["x"] = replaced

	rec, doc := ts.request(t, sess, http.MethodPost, "/csrs/x/approve", url.Values{"uid": {string(old.UID)}}, false)
	if rec.Code != http.StatusConflict {
		t.Fatalf("status %d, want 409", rec.Code)
	}
	if s := doc.Find(`[data-testid="csr-replaced"]`).Text(); !strings.Contains(s, csrReplacedText) {
		t.Errorf("banner %q, want %q", s, csrReplacedText)
	}
	if got := doc.Find(`[data-testid="action-approve-form"] input[name="uid"]`).AttrOr("value", ""); got != string(replacement.UID) {
		t.Errorf("the page's approve form carries %q, want the new request's UID", got)
	}
	if !strings.Contains(doc.Text(), "mallory") {
		t.Error("the page does not show the new request (its requester)")
	}

	rec, doc = ts.request(t, sess, http.MethodPost, "/csrs/bulk", url.Values{"names": {ref("x"), ref("y")}, "action": {"approve"}}, false)
	if rec.Code != http.StatusOK {
		t.Fatalf("bulk: status %d", rec.Code)
	}
	line := doc.Find(`[data-testid="bulk-result"][data-name="x"]`)
	if line.AttrOr("data-ok", "") != "false" || line.AttrOr("data-replaced", "") != "true" || !strings.Contains(line.Text(), csrReplacedText) {
		t.Errorf("x's line: ok=%s replaced=%s %q", line.AttrOr("data-ok", ""), line.AttrOr("data-replaced", ""), line.Text())
	}
	if doc.Find(`[data-testid="row-select"][checked]`).Length() != 0 {
		t.Error("a replaced CSR is not ticked again")
	}
	if strings.Join(ts.writer.decided, ",") != "y" {
		t.Errorf("decided %v, want y alone", ts.writer.decided)
	}

	// No UID: refused before the writer is asked.
	before := len(ts.writer.decided)
	if rec, _ := ts.request(t, sess, http.MethodPost, "/csrs/y/approve", url.Values{}, false); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "uid") {
		t.Errorf("approve without a uid: status %d, want 400 naming the field", rec.Code)
	}
	if len(ts.writer.decided) != before {
		t.Error("a decision without a UID reached the writer")
	}
}
