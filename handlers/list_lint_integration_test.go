//go:build integration

package handlers

import (
	"context"
	"net/http"
	"net/url"
	"slices"
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

// TestListLintFiltersShowOnlyTheFlagged: the home page's items "CRDs with
// stored-version drift" and "webhook configurations with danger lints" link
// to /crds?lint=drift and /validatingwebhooks?lint=danger, which show only
// the flagged objects (a clean CRD and a clean configuration of the same
// test are left out) with a "Filtered: … (clear)" note; a lint value the
// list does not know is a 400 that says which it knows, not a 500.
func TestListLintFiltersShowOnlyTheFlagged(t *testing.T) {
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ext := clientset.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	id := uniq("lintf")
	group := id + ".clusterdesk.test"

	drifted := lintTestCRD(group, "drifts", "Drift")
	old := drifted.Spec.Versions[0]
	old.Name, old.Storage = "v1beta1", false
	drifted.Spec.Versions = append(drifted.Spec.Versions, old)
	clean := lintTestCRD(group, "cleans", "Clean")
	installCRD(t, drifted)
	installCRD(t, clean)
	waitFor(t, "the CRD to take two stored versions", 20*time.Second, func() bool {
		got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, drifted.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		got.Status.StoredVersions = []string{"v1beta1", "v1"}
		_, err = ext.ApiextensionsV1().CustomResourceDefinitions().UpdateStatus(ctx, got, metav1.UpdateOptions{})
		return err == nil
	})

	// failurePolicy Fail reaching kube-system is a danger lint; Ignore is
	// not. Their matchCondition is false: the API server never calls them.
	hook := func(name string, policy admissionregistrationv1.FailurePolicyType) *admissionregistrationv1.ValidatingWebhookConfiguration {
		return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name: "h." + name + ".clusterdesk.test", AdmissionReviewVersions: []string{"v1"},
				SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), FailurePolicy: ptr.To(policy),
				ClientConfig:    admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "default", Name: name}},
				MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "never", Expression: "false"}},
				Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			}}}
	}
	dangerous, calm := id+"-fail", id+"-ignore"
	for _, vwc := range []*admissionregistrationv1.ValidatingWebhookConfiguration{hook(dangerous, admissionregistrationv1.Fail), hook(calm, admissionregistrationv1.Ignore)} {
		mustCreate(t, func() error {
			_, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{})
			return err
		})
		t.Cleanup(func() {
			_ = admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), vwc.Name, metav1.DeleteOptions{})
		})
	}

	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	rowsOf := func(doc *goquery.Document) []string {
		var names []string
		doc.Find(`[data-testid="list-row"]`).Each(func(_ int, s *goquery.Selection) {
			names = append(names, strings.TrimSpace(s.Find("a[href]").First().Text()))
		})
		return names
	}
	for _, tc := range []struct {
		href, q, keep, drop, words string
	}{
		{urls.ListWithLint("crds", urls.LintDrift), group, drifted.Name, clean.Name, "CustomResourceDefinitions with stored-version drift"},
		{urls.ListWithLint("validatingwebhooks", urls.LintDanger), id, dangerous, calm, "ValidatingWebhookConfigurations with danger lints"},
	} {
		var doc *goquery.Document
		var names []string
		waitFor(t, tc.href+" to show "+tc.keep, 30*time.Second, func() bool {
			var code int
			code, doc, _ = ls.get(t, sess, tc.href+"&q="+url.QueryEscape(tc.q))
			names = rowsOf(doc)
			return code == http.StatusOK && strings.Contains(strings.Join(names, " "), tc.keep)
		})
		if strings.Contains(strings.Join(names, " "), tc.drop) {
			t.Errorf("%s shows %s, which has no such lint: rows %v", tc.href, tc.drop, names)
		}
		note := strings.Join(strings.Fields(doc.Find(`[data-testid="lint-filter"]`).Text()), " ")
		clear := doc.Find(`[data-testid="lint-filter-clear"]`).AttrOr("href", "")
		if !strings.Contains(note, "Filtered: "+tc.words) || strings.Contains(clear, "lint=") || !strings.Contains(clear, "q=") {
			t.Errorf("%s: note %q, clear link %q", tc.href, note, clear)
		}
		// The clear link shows both again.
		code, all, _ := ls.get(t, sess, clear)
		if got := strings.Join(rowsOf(all), " "); code != http.StatusOK || !strings.Contains(got, tc.keep) || !strings.Contains(got, tc.drop) {
			t.Errorf("%s: %d, rows %q", clear, code, got)
		}
	}

	// The home page links there. The webhook item links each kind's
	// filtered list: the validating one, and the mutating one as well when
	// the cluster's mutating configurations have danger lints too.
	var lints []string
	waitFor(t, "the home page's items to link to the filters", 30*time.Second, func() bool {
		code, home, _ := ls.get(t, sess, urls.Home)
		drift := home.Find(`[data-testid="attention-crd-drift"] [data-testid="attention-link"]`).AttrOr("href", "")
		lints = home.Find(`[data-testid="attention-webhook-lints"] [data-testid="attention-link"]`).Map(func(_ int, s *goquery.Selection) string {
			return s.AttrOr("href", "")
		})
		return code == http.StatusOK && drift == "/crds?lint=drift" && slices.Contains(lints, "/validatingwebhooks?lint=danger")
	})
	for _, href := range lints {
		if href != "/validatingwebhooks?lint=danger" && href != "/mutatingwebhooks?lint=danger" {
			t.Errorf("the webhook lints item links %q (all: %v)", href, lints)
		}
	}

	// The FlowSchema overview has no lint filter: it says so rather than
	// show every FlowSchema as if filtered.
	for _, bad := range []string{"/crds?lint=bogus", "/csidrivers?lint=danger", "/flowschemas?lint=danger"} {
		code, doc, _ := ls.get(t, sess, bad)
		msg := doc.Find(`[data-testid="banner-lint-filter"]`).Text()
		if code != http.StatusBadRequest || !strings.Contains(msg, "lint") || len(rowsOf(doc)) != 0 {
			t.Errorf("%s: status %d, message %q, %d rows: want 400 naming the filter, no rows", bad, code, msg, len(rowsOf(doc)))
		}
	}
}
