//go:build integration

package handlers

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// postIntercept sends the simulator's form as the page does (multipart, with
// the page's CSRF token unless token is ""), signed in with sess.
func postIntercept(t *testing.T, ls *liveServer, sess *http.Cookie, form url.Values, token string) (int, *goquery.Document) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if token != "" {
		form.Set("_csrf", token)
	}
	for k, vs := range form {
		for _, v := range vs {
			if err := mw.WriteField(k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/validatingwebhooks/intercept", &body)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.AddCookie(sess)
	rec := ls.do(r)
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, doc
}

// TestInterceptPOST: the simulator's form is a POST, so a 200 KiB object is
// evaluated (a GET's URL held 64 KiB); a body over the limit gets a 413 that
// says what happened; a POST without the session's CSRF token is refused;
// and it works in --read-only mode, where a write route next to it is still
// refused. A GET link with the same fields still answers.
func TestInterceptPOST(t *testing.T) {
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	sfx := strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	label := "celpost-" + sfx
	// A webhook that no real request reaches (no namespace carries the
	// label): its matchCondition reads the large object.
	vwcName := "celpost-" + sfx
	mustCreate(t, func() error {
		_, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: vwcName},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name: "big.celpost.clusterdesk.dev", AdmissionReviewVersions: []string{"v1"},
				SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{label: "yes"}},
				ClientConfig:      admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:9/never")},
				Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE"},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
				MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "big", Expression: "size(object.data.blob) >= 200000"}},
			}},
		}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), vwcName, metav1.DeleteOptions{})
	})

	ls := newLiveServer(t, testcluster.Admin, true) // --read-only
	sess := ls.login(t)
	waitFor(t, "the cache to hold the configuration", 30*time.Second, func() bool { _, err := ls.cache.Webhook(vwcName); return err == nil })
	token := pageCSRFToken(t, ls.e, withCookie(sess))
	object := func(blob int) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  namespace: ns-" + sfx + "\ndata:\n  blob: " + strings.Repeat("x", blob) + "\n"
	}
	form := func(obj string) url.Values {
		return url.Values{"operation": {"CREATE"}, "version": {"v1"}, "resource": {"configmaps"}, "namespace": {"ns-" + sfx},
			"nsLabels": {label + "=yes"}, "user": {"someone"}, "object": {obj}}
	}
	verdict := func(doc *goquery.Document) string {
		var v string
		doc.Find(`[data-testid="intercept-row"]`).Each(func(_ int, row *goquery.Selection) {
			if strings.TrimSpace(row.Find("td").Eq(2).Text()) == vwcName {
				v = strings.TrimSpace(row.Find("td").Eq(4).Text())
			}
		})
		return v
	}

	big := object(200 << 10)
	code, doc := postIntercept(t, ls, sess, form(big), token)
	if code != http.StatusOK || verdict(doc) != "called" {
		t.Fatalf("a %d KiB object: status %d, verdict %q: %s", len(big)>>10, code, verdict(doc), doc.Find(`[data-testid$="-error"]`).Text())
	}
	t.Logf("a %d KiB object is evaluated in read-only mode: %s", len(big)>>10, verdict(doc))
	// The same condition is false for a small object: the verdict comes from the object sent.
	if code, doc := postIntercept(t, ls, sess, form(object(10)), token); code != http.StatusOK || verdict(doc) != "skipped by matchConditions" {
		t.Fatalf("a small object: status %d, verdict %q", code, verdict(doc))
	}

	// Over maxBody (1 MiB): refused with a message that says so.
	code, doc = postIntercept(t, ls, sess, form(object(1100<<10)), token)
	if msg := doc.Text(); code != http.StatusRequestEntityTooLarge || !strings.Contains(msg, "larger than 1MiB") || !strings.Contains(msg, "the simulator") {
		t.Fatalf("a 1.1 MiB object: status %d: %.300s", code, strings.Join(strings.Fields(msg), " "))
	}
	// Under the body limit but over the per-object limit: the field says so.
	code, doc = postIntercept(t, ls, sess, form(object(600<<10)), token)
	if got := doc.Find(`[data-testid="intercept-object-error"]`).Text(); code != http.StatusUnprocessableEntity || !strings.Contains(got, "512 KiB") {
		t.Fatalf("a 600 KiB object: status %d, field error %q", code, got)
	}

	// Without the token, or with another session's, nothing is evaluated.
	for name, tok := range map[string]string{"no token": "", "a forged token": strings.Repeat("A", len(token))} {
		code, doc := postIntercept(t, ls, sess, form(big), tok)
		if code != http.StatusForbidden || !strings.Contains(doc.Text(), "CSRF") || doc.Find(`[data-testid="intercept-result"]`).Length() != 0 {
			t.Errorf("%s: status %d, want 403 (CSRF)", name, code)
		}
	}

	// Read-only mode still refuses a write route.
	if rec := ls.post(t, sess, "/csrs/bulk", url.Values{"action": {"approve"}, "names": {"x/y"}}); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "read-only") {
		t.Errorf("a write in read-only mode: status %d", rec.Code)
	}

	// A GET link to a simple request answers as before.
	q := form("")
	q.Del("object")
	code, doc, _ = ls.get(t, sess, "/validatingwebhooks/intercept?"+q.Encode())
	if code != http.StatusOK || verdict(doc) == "" {
		t.Fatalf("GET link: status %d, verdict %q", code, verdict(doc))
	}
	t.Logf("GET link without an object: %s", verdict(doc))
}
