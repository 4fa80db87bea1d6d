//go:build integration

package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// TestShadowModeInTheQueue installs three policies for a signer of its own
// (one approves, one denies, one does not compile), creates requests they
// match, and checks the queue's chips, the policy filter's rows and counts,
// and "approve everything the policy approves": exactly the previewed
// requests are approved on the API server, with the policy named in the
// condition, while one replaced under the same name between preview and
// click is skipped and stays pending.
func TestShadowModeInTheQueue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(cfg)
	run := fmt.Sprint(time.Now().UnixNano())
	signer := "example.com/it-shadow-" + run
	approve, deny, broken := "it-shadow-approve-"+run, "it-shadow-deny-"+run, "it-shadow-broken-"+run
	policies := dynamic.NewForConfigOrDie(cfg).Resource(kube.CSRApprovalPolicyResource)
	for _, p := range []struct{ name, expr, decision string }{
		{approve, `request.subject.organizations.exists(o, o == "it-ok")`, "Approve"},
		{deny, `request.subject.organizations.exists(o, o == "it-bad")`, "Deny"},
		{broken, "request.username != '' &&\n  request.nosuch()", "Deny"},
	} {
		_, err := policies.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "clusterdesk.io/v1alpha1", "kind": "CSRApprovalPolicy", "metadata": map[string]any{"name": p.name},
			"spec": map[string]any{"signerNames": []any{signer}, "decision": p.decision, "reason": "ItShadow", "message": p.name, "expression": p.expr},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create policy %s (is the CRD seeded?): %v", p.name, err)
		}
		t.Cleanup(func() { _ = policies.Delete(context.Background(), p.name, metav1.DeleteOptions{}) })
	}
	ok1 := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "ok1", Signer: signer, Organizations: []string{"it-ok"}})
	ok2 := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "ok2", Signer: signer, Organizations: []string{"it-ok"}})
	bad := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "bad", Signer: signer, Organizations: []string{"it-bad"}})
	other := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "other", Signer: signer, Organizations: []string{"it-other"}})

	set := watchedPolicies(t, ctx, cfg, approve, broken)
	ls := newLiveServerWith(t, cfg, testcluster.Admin, false, func(d *Deps) { d.Policies = set })
	sess := ls.login(t)
	ls.waitCached(t, ok1, ok2, bad, other)

	// Chips: each row names the policies that match it or cannot run.
	_, doc, _ := ls.get(t, sess, urls.CSRs+"?"+url.Values{"signer": {signer}, "state": {"pending"}}.Encode())
	chips := func(doc *goquery.Document, name string) []string {
		var out []string
		doc.Find(`tr[data-name="` + name + `"] [data-testid="verdict-chip"]`).Each(func(_ int, s *goquery.Selection) {
			p, _ := s.Attr("data-policy")
			v, _ := s.Attr("data-verdict")
			out = append(out, p+"="+v)
		})
		return out
	}
	for name, want := range map[string][]string{
		ok1:   {broken + "=error", approve + "=approve"},
		bad:   {broken + "=error", deny + "=deny"},
		other: {broken + "=error"},
	} {
		got := chips(doc, name)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: chips %v; want %v", name, got, want)
		}
	}
	if title, _ := doc.Find(`tr[data-name="` + ok1 + `"] [data-policy="` + approve + `"]`).Attr("title"); !strings.Contains(title, "ItShadow") {
		t.Errorf("the approve chip's title %q does not carry the reason", title)
	}
	if title, _ := doc.Find(`tr[data-name="` + ok1 + `"] [data-policy="` + broken + `"]`).Attr("title"); !strings.Contains(title, "2:") {
		t.Errorf("the broken policy's chip %q does not say where", title)
	}

	// The filter: rows, the pending tab's count.
	filtered := urls.CSRs + "?" + url.Values{"policy": {approve}, "verdict": {"approve"}}.Encode()
	code, doc, _ := ls.get(t, sess, filtered)
	if code != http.StatusOK {
		t.Fatalf("filter: status %d", code)
	}
	var rows []string
	doc.Find(`[data-testid="list-row"]`).Each(func(_ int, s *goquery.Selection) { n, _ := s.Attr("data-name"); rows = append(rows, n) })
	slices.Sort(rows)
	want := []string{ok1, ok2}
	slices.Sort(want)
	if !slices.Equal(rows, want) {
		t.Errorf("filter rows %v; want %v", rows, want)
	}
	if c := strings.TrimSpace(doc.Find(`[data-testid="tab-pending"] [data-testid="tab-count"]`).Text()); c != "2" {
		t.Logf("pending tab: %q", doc.Find(`[data-testid="tab-pending"]`).Text())
		t.Errorf("pending tab count %q; want 2", c)
	}
	if href, _ := doc.Find(`[data-testid="policy-approve"]`).Attr("href"); href != urls.CSRPolicyApprove(approve) {
		t.Errorf("the bulk preview link is %q", href)
	}

	// The preview lists the two; ok2 is then replaced under its name.
	code, doc, _ = ls.get(t, sess, urls.CSRPolicyApprove(approve))
	if code != http.StatusOK {
		t.Fatalf("preview: status %d", code)
	}
	var refs []string
	doc.Find(`[data-testid="policy-approve-form"] input[name="r"]`).Each(func(_ int, s *goquery.Selection) { v, _ := s.Attr("value"); refs = append(refs, v) })
	if len(refs) != 2 {
		t.Fatalf("the preview carries %v; want ok1 and ok2", refs)
	}
	csrs := cs.CertificatesV1().CertificateSigningRequests()
	old, err := csrs.Get(ctx, ok2, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := csrs.Delete(ctx, ok2, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: ok2}, Spec: certificatesv1.CertificateSigningRequestSpec{
		Request: old.Spec.Request, SignerName: signer, Usages: old.Spec.Usages}}
	created, err := csrs.Create(ctx, again, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the cache to see the replaced "+ok2, 10*time.Second, func() bool {
		c, err := ls.cache.CSR(ok2)
		return err == nil && c.UID == created.UID
	})

	rec := ls.post(t, sess, urls.CSRPolicyApprove(approve), url.Values{"r": refs})
	if rec.Code != http.StatusOK {
		t.Fatalf("confirm: status %d: %s", rec.Code, rec.Body.String())
	}
	body := rec.Body.String()
	if !strings.Contains(body, "skipped: "+"another request was created under its name") {
		t.Error("the replaced request is not reported as skipped")
	}
	got, err := csrs.Get(ctx, ok1, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	approved := false
	for _, c := range got.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue {
			// The policy's version it evaluated (issue 47, item 4).
			v, traced := csrpolicy.ParseVersion(c.Message)
			approved = traced && v.Policy == approve && v.Generation == 1 && strings.HasSuffix(c.Message, csrpolicy.VersionText(v)+" (shadow)") &&
				strings.Contains(c.Message, testcluster.Admin)
			if !approved {
				t.Errorf("ok1's condition message %q", c.Message)
			}
		}
	}
	if !approved {
		t.Errorf("ok1 is not approved: %+v", got.Status.Conditions)
	}
	for _, name := range []string{ok2, bad, other} {
		c, err := csrs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Status.Conditions) > 0 {
			t.Errorf("%s was decided: %+v", name, c.Status.Conditions)
		}
	}

	// A request that changed since the preview (a label) is skipped too.
	code, doc, _ = ls.get(t, sess, urls.CSRPolicyApprove(approve))
	refs = nil
	doc.Find(`[data-testid="policy-approve-form"] input[name="r"]`).Each(func(_ int, s *goquery.Selection) { v, _ := s.Attr("value"); refs = append(refs, v) })
	if code != http.StatusOK || len(refs) != 1 || !strings.HasSuffix(refs[0], "/"+ok2) {
		t.Fatalf("second preview: status %d, %v; want the new %s alone", code, refs, ok2)
	}
	cur, err := csrs.Get(ctx, ok2, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Labels = map[string]string{"it": "changed"}
	changed, err := csrs.Update(ctx, cur, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the cache to see the label", 10*time.Second, func() bool {
		c, err := ls.cache.CSR(ok2)
		return err == nil && c.ResourceVersion == changed.ResourceVersion
	})
	rec = ls.post(t, sess, urls.CSRPolicyApprove(approve), url.Values{"r": refs})
	if !strings.Contains(rec.Body.String(), "skipped: it changed since the preview") {
		t.Errorf("the changed request is not reported as skipped (status %d)", rec.Code)
	}
	if c, _ := csrs.Get(ctx, ok2, metav1.GetOptions{}); c != nil && len(c.Status.Conditions) > 0 {
		t.Errorf("the changed %s was decided", ok2)
	}
}
