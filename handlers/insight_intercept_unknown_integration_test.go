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
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestInterceptAuthorizerUnknownWithoutReviewRights signs in as the
// devcluster's auditor, who may read webhook configurations and policies but
// may not create SubjectAccessReviews, and asks about a request whose webhook
// matchCondition and policy validation call `authorizer`. Both answers must
// be "unknown", saying why, and the policy must not be said to deny: the CEL
// library reads an unanswered check as "not allowed", which would be a
// guess. Signed in as admin (who may ask), the same request gets a definite
// answer, so the test tells the two apart.
func TestInterceptAuthorizerUnknownWithoutReviewRights(t *testing.T) {
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	auditor := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Auditor))
	ctx, bg := context.Background(), context.Background()
	// The premise: the auditor may not ask access reviews.
	_, err := auditor.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "someone", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets"}}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("the auditor's SubjectAccessReview: %v, want Forbidden", err)
	}

	sfx := strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	name, label := "celunk-"+sfx, "celunk-"+sfx
	// Only requests in namespaces carrying this run's label match: none
	// exists, so no real request reaches the webhook or the policy.
	nsSel := &metav1.LabelSelector{MatchLabels: map[string]string{label: "yes"}}
	check := "authorizer.group('').resource('secrets').namespace(request.namespace).check('list').allowed()"
	cmRule := admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}
	mustCreate(t, func() error {
		_, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name: "authz.celunk.clusterdesk.dev", AdmissionReviewVersions: []string{"v1"},
				SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
				NamespaceSelector: nsSel, ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:9/never")},
				Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE"}, Rule: cmRule}},
				MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "may-list-secrets", Expression: check},
					// The word in a string only: evaluated as usual, never marked unknown.
					{Name: "word-only", Expression: "!has(object.metadata.annotations) || !('authorizer' in object.metadata.annotations)"}},
			}},
		}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		_ = admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(bg, name, metav1.DeleteOptions{})
	})
	mustCreate(t, func() error {
		_, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{FailurePolicy: ptr.To(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{NamespaceSelector: nsSel, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{"CREATE"}, Rule: cmRule}}}},
				Validations: []admissionregistrationv1.Validation{{Expression: check, Message: "celunk: only who may list Secrets"}}},
		}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		_ = admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(bg, name, metav1.DeleteOptions{})
	})
	mustCreate(t, func() error {
		_, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
		}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		_ = admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(bg, name, metav1.DeleteOptions{})
	})

	form := func() map[string][]string {
		obj := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ns-" + sfx + "\n"
		return map[string][]string{"operation": {"CREATE"}, "version": {"v1"}, "resource": {"configmaps"}, "namespace": {"ns-" + sfx},
			"nsLabels": {label + "=yes"}, "user": {"celunk-nobody"}, "groups": {"system:authenticated"}, "object": {obj}}
	}
	type answer struct{ webhook, webhookWhy, webhookConds, policy, policyWhy, intro string }
	ask := func(t *testing.T, identity string) answer {
		t.Helper()
		ls := newLiveServer(t, identity, false)
		sess := ls.login(t)
		waitFor(t, "the cache to hold the webhook and the policy", 30*time.Second, func() bool {
			_, err := ls.cache.Webhook(name)
			return err == nil && cachedNamed(ls.cache, kube.AdmissionPolicies, name) && cachedNamed(ls.cache, kube.AdmissionPolicyBindings, name)
		})
		code, doc := postIntercept(t, ls, sess, form(), pageCSRFToken(t, ls.e, withCookie(sess)))
		if code != http.StatusOK {
			t.Fatalf("%s: status %d: %s", identity, code, doc.Find(`[data-testid$="-error"]`).Text())
		}
		var a answer
		text := func(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }
		doc.Find(`[data-testid="intercept-row"]`).Each(func(_ int, row *goquery.Selection) {
			if cells := row.Find("td"); strings.TrimSpace(cells.Eq(2).Text()) == name {
				a.webhook, a.webhookWhy, a.webhookConds = text(cells.Eq(4)), text(cells.Eq(5)), text(cells.Eq(6))
			}
		})
		doc.Find(`[data-testid="intercept-policy-row"]`).Each(func(_ int, row *goquery.Selection) {
			if cells := row.Find("td"); strings.TrimSpace(cells.Eq(0).Text()) == name {
				a.policy, a.policyWhy = text(cells.Eq(2)), text(cells.Eq(4))
			}
		})
		a.intro = text(doc.Find(`[data-testid="intercept-policies"]`))
		t.Logf("%s: webhook %q (%s); policy %q (%s)", identity, a.webhook, a.webhookWhy, a.policy, a.policyWhy)
		return a
	}

	t.Run("auditor: unknown", func(t *testing.T) {
		a := ask(t, testcluster.Auditor)
		if a.webhook != "unknown" || !strings.Contains(a.webhookWhy, "may not create SubjectAccessReviews") {
			t.Errorf("webhook: %q (%s), want unknown saying the identity may not create SubjectAccessReviews", a.webhook, a.webhookWhy)
		}
		if !strings.Contains(a.webhookConds, "may-list-secrets: unknown") {
			t.Errorf("the condition's guessed result is shown: %s", a.webhookConds)
		}
		if !strings.Contains(a.webhookConds, "word-only: true") {
			t.Errorf("a condition that asks no authorizer is not shown with its result: %s", a.webhookConds)
		}
		if a.policy != "unknown" || !strings.Contains(a.policyWhy, "may not create SubjectAccessReviews") {
			t.Errorf("policy: %q (%s), want unknown saying why", a.policy, a.policyWhy)
		}
		if strings.Contains(a.intro, "would reject") {
			t.Errorf("the policy panel says the request would be rejected on a guess: %s", a.intro)
		}
	})
	t.Run("admin: a definite answer", func(t *testing.T) {
		a := ask(t, testcluster.Admin)
		if a.webhook != "skipped by matchConditions" || a.policy != "denies" || !strings.Contains(a.intro, "celunk: only who may list Secrets") {
			t.Errorf("admin (may ask): webhook %q, policy %q, intro %s", a.webhook, a.policy, a.intro)
		}
	})
}

// cachedNamed reports whether the cache holds an object of kind id named name.
func cachedNamed(c *kube.Cache, id kube.KindID, name string) bool {
	objs, err := c.List(id)
	if err != nil {
		return false
	}
	for _, o := range objs {
		if m, ok := o.(metav1.Object); ok && m.GetName() == name {
			return true
		}
	}
	return false
}
