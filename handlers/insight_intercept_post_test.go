package handlers

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// simCluster holds one validating webhook whose matchCondition reads the
// object's size, and no policies: enough for the simulator's form.
type simCluster struct{ emptyCluster }

func (simCluster) Ready() bool { return true }
func (simCluster) Kind(id kube.KindID) (kube.Kind, bool) {
	for _, k := range kube.AllKinds() {
		if k.ID == id {
			return k, true
		}
	}
	return kube.Kind{}, false
}
func (simCluster) Webhooks() ([]*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return []*admissionregistrationv1.ValidatingWebhookConfiguration{{ObjectMeta: metav1.ObjectMeta{Name: "sim"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "big.sim.clusterdesk.dev", FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE"},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "big", Expression: "size(object.data.blob) >= 200000"}}}}}}, nil
}
func (simCluster) MutatingWebhooks() ([]*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return nil, nil
}
func (simCluster) List(kube.KindID) ([]runtime.Object, error) { return nil, nil }

// simPost sends the simulator's form as the page does: multipart, with the
// page's CSRF token unless withToken is false.
func simPost(t *testing.T, ts *testServer, sess *http.Cookie, blob int, withToken bool) (int, *goquery.Document) {
	t.Helper()
	form := url.Values{"operation": {"CREATE"}, "version": {"v1"}, "resource": {"configmaps"}, "namespace": {"default"},
		"object": {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: " + strings.Repeat("x", blob) + "\n"}}
	if withToken {
		form.Set("_csrf", pageCSRFToken(t, ts.e, withCookie(sess)))
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, vs := range form {
		for _, v := range vs {
			_ = mw.WriteField(k, v)
		}
	}
	_ = mw.Close()
	r := httptest.NewRequest(http.MethodPost, "/validatingwebhooks/intercept", &body)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.AddCookie(sess)
	rec := ts.do(r)
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, doc
}

// The simulator's POST in --read-only mode: a 200 KiB object is evaluated
// (its condition reads the object), a body over 1 MiB is a 413 naming the
// simulator, one object over 512 KiB is a field error, and a POST without
// the CSRF token is refused. (TestInterceptPOST does the same on the
// devcluster.)
func TestInterceptPOSTReadOnly(t *testing.T) {
	ts := newTestServerOf(t, true, simCluster{}, allowAll{})
	sess := ts.login(t)
	cell := func(doc *goquery.Document) string {
		return strings.TrimSpace(doc.Find(`[data-testid="intercept-row"] td`).Eq(4).Text())
	}
	if code, doc := simPost(t, ts, sess, 200<<10, true); code != http.StatusOK || cell(doc) != "called" {
		t.Fatalf("200 KiB: status %d, verdict %q %s", code, cell(doc), doc.Find(`[data-testid$="-error"]`).Text())
	}
	if code, doc := simPost(t, ts, sess, 10, true); code != http.StatusOK || cell(doc) != "skipped by matchConditions" {
		t.Fatalf("small: status %d, verdict %q", code, cell(doc))
	}
	if code, doc := simPost(t, ts, sess, 1100<<10, true); code != http.StatusRequestEntityTooLarge || !strings.Contains(doc.Text(), "the simulator accepts") {
		t.Fatalf("1.1 MiB: status %d: %.200s", code, strings.Join(strings.Fields(doc.Text()), " "))
	}
	if code, doc := simPost(t, ts, sess, 600<<10, true); code != http.StatusUnprocessableEntity || !strings.Contains(doc.Find(`[data-testid="intercept-object-error"]`).Text(), "512 KiB") {
		t.Fatalf("600 KiB: status %d", code)
	}
	if code, doc := simPost(t, ts, sess, 200<<10, false); code != http.StatusForbidden || doc.Find(`[data-testid="intercept-result"]`).Length() != 0 {
		t.Fatalf("no token: status %d", code)
	}
}
