//go:build integration

package handlers

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// TestHomeSaysWhatNeedsAttentionOnTheDevcluster creates, on the devcluster, a
// storm of two requests for a signer nobody may approve, a webhook
// configuration with a danger lint (failurePolicy Fail reaching kube-system
// for a control-plane group; its matchCondition is false, so the API server
// never calls it) and a CRD with two stored versions, and finds each item on the
// home page with its link, which lands on the filtered view. The approver,
// who may list CSRs only, sees the CSR items and not the others.
func TestHomeSaysWhatNeedsAttentionOnTheDevcluster(t *testing.T) {
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	id := uniq("attn")
	signer := id + ".clusterdesk.test/orphan"
	storm := []string{
		testcluster.CreateCSR(t, testcluster.CSR{Suffix: "a", Signer: signer, CommonName: id}),
		testcluster.CreateCSR(t, testcluster.CSR{Suffix: "b", Signer: signer, CommonName: id}),
	}

	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: id},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "fail." + id + ".clusterdesk.test", AdmissionReviewVersions: []string{"v1"},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			ClientConfig:    admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "default", Name: id}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "never", Expression: "false"}},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
		}}}
	mustCreate(t, func() error {
		_, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		_ = admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), id, metav1.DeleteOptions{})
	})

	crd := lintTestCRD(id+".clusterdesk.test", "drifts", "Drift")
	old := crd.Spec.Versions[0]
	old.Name, old.Storage = "v1beta1", false
	crd.Spec.Versions = append(crd.Spec.Versions, old)
	installCRD(t, crd)
	ext := clientset.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	waitFor(t, "the CRD to take two stored versions", 20*time.Second, func() bool {
		got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		got.Status.StoredVersions = []string{"v1beta1", "v1"}
		_, err = ext.ApiextensionsV1().CustomResourceDefinitions().UpdateStatus(ctx, got, metav1.UpdateOptions{})
		return err == nil
	})

	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	var doc *goquery.Document
	entry := func(item, name string) *goquery.Selection {
		return doc.Find(`[data-testid="attention-` + item + `"] [data-testid="attention-entry"]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
			return strings.Contains(s.Text(), name)
		})
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var code int
		code, doc, _ = ls.get(t, sess, urls.Home)
		if code == http.StatusOK && entry("pending-csrs", signer).Length() == 1 && entry("csr-storms", id).Length() == 1 &&
			entry("unapproved-signers", signer).Length() == 1 && entry("webhook-lints", id).Length() == 1 &&
			entry("crd-drift", crd.Name).Length() == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s, the home page (status %d) says: %s", code, strings.Join(strings.Fields(doc.Find(`[data-testid="attention"]`).Text()), " "))
		}
	}
	if text := entry("pending-csrs", signer).Text(); !strings.Contains(text, "2 pending") {
		t.Errorf("pending entry %q", text)
	}
	if text := entry("webhook-lints", id).Text(); !strings.Contains(text, "Fail policy reaches kube-system") {
		t.Errorf("lint entry %q", text)
	}

	// Each entry's link lands on its filtered view.
	follow := func(sel *goquery.Selection) *goquery.Document {
		t.Helper()
		href, _ := sel.Find("a").Attr("href")
		code, page, _ := ls.get(t, sess, href)
		if code != http.StatusOK {
			t.Fatalf("%s: status %d", href, code)
		}
		return page
	}
	// The signer's pending queue: the storm is one row, naming its newest.
	queue := follow(entry("pending-csrs", signer)).Find("main").Text()
	if !strings.Contains(queue, storm[1]) || !strings.Contains(strings.Join(strings.Fields(queue), " "), "Showing 2 of") {
		t.Errorf("the signer's pending queue does not show the storm alone: %q", strings.Join(strings.Fields(queue), " "))
	}
	if group := follow(entry("csr-storms", id)).Find("main").Text(); !strings.Contains(group, storm[0]) || !strings.Contains(group, storm[1]) {
		t.Errorf("the storm's view lacks its members: %q", strings.Join(strings.Fields(group), " "))
	}
	if page := follow(entry("unapproved-signers", signer)); page.Find(`[data-testid="approvers-nobody"], [data-testid="approvers-only-admins"]`).Length() != 1 {
		t.Error("the approvers page does not say the signer's requests stay pending")
	}
	if page := follow(entry("crd-drift", crd.Name)); !strings.Contains(page.Find("main").Text(), "Several stored versions") {
		t.Error("the CRD's page does not show the drift")
	}

	// The approver may list CSRs only: the CSR items, nothing of the rest.
	as := newLiveServer(t, testcluster.Approver, false)
	asSess := as.login(t)
	waitFor(t, "the approver's home page", 30*time.Second, func() bool {
		var code int
		code, doc, _ = as.get(t, asSess, urls.Home)
		return code == http.StatusOK && entry("pending-csrs", signer).Length() == 1
	})
	if n := doc.Find(`[data-testid="attention-webhook-lints"], [data-testid="attention-crd-drift"], [data-testid="attention-unapproved-signers"]`).Length(); n != 0 {
		t.Errorf("the approver sees %d items of kinds or RBAC it may not list", n)
	}
}
