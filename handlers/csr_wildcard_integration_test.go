//go:build integration

package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// wildcardApprover makes a user of this test's own who may read what the
// auditor reads and approve CSRs of every signer under domain, granted by RBAC
// as signers "<domain>/*" only, and returns a config acting as that user
// (admin impersonating it, so the API server authorizes the user, not admin).
// The roles and bindings are this test's and go when it ends.
func wildcardApprover(t *testing.T, domain string) (*rest.Config, string) {
	t.Helper()
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	stamp := time.Now().UnixNano()
	user := fmt.Sprintf("it-wildcard-approver-%d", stamp)
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("it-wildcard-approve-%d", stamp)},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests/approval"}, Verbs: []string{"update"}},
			{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, ResourceNames: []string{domain + "/*"}, Verbs: []string{"approve"}},
		},
	}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{})
	})
	for _, ref := range []string{role.Name, "clusterdesk:auditor"} {
		b := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("it-wildcard-%d-%s", stamp, sanitize(ref))},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ref},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
		if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = admin.RbacV1().ClusterRoleBindings().Delete(context.Background(), b.Name, metav1.DeleteOptions{})
		})
	}
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	// The API server's RBAC authorizer learns of new bindings by watch; wait
	// until it answers with them, or the console would start without them.
	as := kubernetes.NewForConfigOrDie(cfg)
	waitFor(t, "RBAC to grant the wildcard", 15*time.Second, func() bool {
		r, err := as.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: "list", Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}},
		}, metav1.CreateOptions{})
		if err != nil || !r.Status.Allowed {
			return false
		}
		r, err = as.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: "approve", Group: "certificates.k8s.io", Resource: "signers", Name: domain + "/*"}},
		}, metav1.CreateOptions{})
		return err == nil && r.Status.Allowed
	})
	return cfg, user
}

func sanitize(s string) string {
	out := []byte(s)
	for i, c := range out {
		if c == ':' {
			out[i] = '-'
		}
	}
	return string(out)
}

// RBAC may grant approve on signers "<domain>/*"; the API server's approval
// plugin accepts it for every signer of the domain, and so must the console:
// buttons on the detail page and the queue, and approvals that work, single
// and bulk. A signer of another domain stays without buttons.
func TestWildcardSignerApproverMayDecide(t *testing.T) {
	domain := fmt.Sprintf("it-wild-%d.example.com", time.Now().UnixNano())
	cfg, user := wildcardApprover(t, domain)
	ls := newLiveServerAs(t, cfg, user, false)
	sess := ls.login(t)

	mine := testcluster.CSR{Signer: domain + "/issuer", CommonName: "it-wildcard", Organizations: []string{"it"},
		Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}}
	single, bulkA, bulkB := testcluster.CreateCSR(t, alone(mine, "single")), testcluster.CreateCSR(t, alone(mine, "bulk-a")), testcluster.CreateCSR(t, alone(mine, "bulk-b"))
	other := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "other", Signer: "other-" + domain + "/issuer"})
	ls.waitCached(t, single, bulkA, bulkB, other)

	// Detail page: buttons, and the approval goes through.
	_, doc, _ := ls.get(t, sess, "/csrs/"+single)
	form := doc.Find(`[data-testid="action-approve-form"]`)
	if doc.Find(`[data-testid="action-approve"]`).Length() != 1 || doc.Find(`[data-testid="action-deny"]`).Length() != 1 {
		t.Errorf("no approve and deny on %s for a user granted %s/*", single, domain)
	}
	fields := hiddenFields(form)
	if fields.Get("uid") == "" {
		fields.Set("uid", ls.uid(t, single)) // approve as a forged form would: the API server's say is tested too
	}
	if rec := ls.post(t, sess, "/csrs/"+single+"/approve", fields); rec.Code != http.StatusSeeOther {
		t.Errorf("approve %s: status %d: %.300s", single, rec.Code, rec.Body.String())
	}
	if c := liveCSR(t, single); len(c.Status.Conditions) != 1 || c.Status.Conditions[0].Type != certificatesv1.CertificateApproved {
		t.Errorf("%s on the API server: %+v, want approved", single, c.Status.Conditions)
	}
	_, doc, _ = ls.get(t, sess, "/csrs/"+other)
	if doc.Find(`[data-testid^="action-"]`).Length() != 0 {
		t.Errorf("buttons on %s, whose signer's domain the user was not granted", other)
	}

	// Queue: the rows are selectable, the bulk form is there, bulk approves.
	_, doc, _ = ls.get(t, sess, "/csrs?state=pending&q="+url.QueryEscape(domain))
	if doc.Find(`[data-testid="bulk-form"]`).Length() != 1 {
		t.Error("no bulk form for a user granted a signer domain")
	}
	var refs []string
	for _, n := range []string{bulkA, bulkB} {
		box := doc.Find(`[data-testid="list-row"][data-name="` + n + `"] [data-testid="row-select"]`)
		if box.Length() != 1 {
			t.Errorf("%s cannot be selected in the queue", n)
		}
		refs = append(refs, ls.uid(t, n)+"/"+n)
	}
	if doc.Find(`[data-testid="list-row"][data-name="`+other+`"] [data-testid="row-select"]`).Length() != 0 {
		t.Errorf("%s is selectable, though its signer's domain was not granted", other)
	}
	code, res := ls.bulkRefs(t, sess, "approve", refs...)
	if code != http.StatusOK {
		t.Errorf("bulk approve: status %d", code)
	}
	for _, n := range []string{bulkA, bulkB} {
		if ok, s := bulkResult(res, n); ok != "true" {
			t.Errorf("%s: result %s %q, want approved", n, ok, s)
		}
		if c := liveCSR(t, n); len(c.Status.Conditions) != 1 || c.Status.Conditions[0].Type != certificatesv1.CertificateApproved {
			t.Errorf("%s on the API server: %+v, want approved", n, c.Status.Conditions)
		}
	}
}
