//go:build integration

package handlers

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// The devcluster's role users (devcluster/internal/idp): each in one group
// that the devcluster binds to nothing, so what they may do is what the
// chart's role bound to that group grants.
var roleUsers = []struct{ user, job, group string }{
	{"erin", "viewer", "oidc:clusterdesk-role-viewer"},
	{"frank", "auditor", "oidc:clusterdesk-role-auditor"},
	{"grace", "csrApprover", "oidc:clusterdesk-role-csr-approver"},
	{"heidi", "apfAdmin", "oidc:clusterdesk-role-apf-admin"},
	{"ivan", "admissionAdmin", "oidc:clusterdesk-role-admission-admin"},
}

// rolesSigner is the one signer the test's CSR approver role names.
const rolesSigner = "example.com/clusterdesk-roles-test"

// TestRolesByJobThroughOIDC: the Helm chart's roles by job
// (charts/clusterdesk/templates/roles.yaml, as `helm template` renders them
// with roles.<job>.groups) applied to the devcluster, each bound to one
// group of the devcluster's OpenID provider; each role's person signs in
// through the provider into the console, and every page and action of the
// role works while every other is refused: by the console's access check of
// the kind (403 before the page) or by the API server (its 403 shown). The
// console runs as the chart runs it, with the ledger's own gate
// (--ledger-readers granted): the viewer, who lists every kind, is refused
// the ledger, its exports, the replay and the what-if; the auditor reads
// them.
func TestRolesByJobThroughOIDC(t *testing.T) {
	admin := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(admin)
	ctx := context.Background()
	applyChartRoles(t, cs)

	// A ledger holding the story of a CSR the cluster no longer has.
	store, err := ledger.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	gone := strings.ReplaceAll("roles-gone-"+time.Now().UTC().Format("150405.000000"), ".", "-")
	story := testfixtures.LedgerCSRStory(t, gone, "kubernetes.io/kube-apiserver-client", "alice", "bob", 3,
		time.Now().UTC().Add(-time.Hour).Truncate(time.Second))
	if _, err := store.Append(ctx, story.Entries); err != nil {
		t.Fatal(err)
	}
	oc := newOIDCReplica(t, testcluster.OIDCClientConsole, "", auth.NewSessions(), withLedger(store), withLedgerReaders(LedgerReadersGranted))

	// Pending requests: one of the role's signer, one of another.
	ours := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "ours", Signer: rolesSigner})
	theirs := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "theirs"})
	oursUID, theirsUID := oc.waitForCSR(t, ours), oc.waitForCSR(t, theirs)

	browsers := map[string]*oidcBrowser{}
	for _, u := range roleUsers {
		b := oc.browser(t)
		b.signIn(t, u.user)
		browsers[u.job] = b
	}

	// Pages: the lists of every kind, the approvers overview, a CSR's history
	// in the ledger; true: the role's person opens it (200).
	lists := []kube.KindID{kube.CSRs, kube.FlowSchemas, kube.PriorityLevels, kube.CRDs, kube.Webhooks, kube.MutatingWebhooks,
		kube.AdmissionPolicies, kube.AdmissionPolicyBindings, kube.CSIDrivers, kube.PriorityClasses, kube.CSRApprovalPolicies}
	readsAll := map[kube.KindID]bool{}
	for _, k := range lists {
		readsAll[k] = true
	}
	readers := map[string]map[kube.KindID]bool{
		"viewer":         readsAll,
		"auditor":        readsAll,
		"csrApprover":    {kube.CSRs: true, kube.CSRApprovalPolicies: true},
		"apfAdmin":       {kube.FlowSchemas: true, kube.PriorityLevels: true},
		"admissionAdmin": {kube.Webhooks: true, kube.MutatingWebhooks: true, kube.AdmissionPolicies: true, kube.AdmissionPolicyBindings: true},
	}
	for _, u := range roleUsers {
		b := browsers[u.job]
		for _, k := range lists {
			want := http.StatusForbidden
			if readers[u.job][k] {
				want = http.StatusOK
			}
			if rec := b.get(urls.List(k)); rec.Code != want {
				t.Errorf("%s (%s) opening %s: %d, want %d", u.user, u.job, urls.List(k), rec.Code, want)
			}
		}
		// One object's page, for the CSR readers.
		if readers[u.job][kube.CSRs] {
			if rec := b.get(urls.CSR(ours)); rec.Code != http.StatusOK {
				t.Errorf("%s (%s) opening %s: %d", u.user, u.job, ours, rec.Code)
			}
		}
		checkLedger(t, b, u.user, u.job, gone, readers[u.job][kube.CSRs])
	}

	// Who may approve each signer reads RBAC as the person: the auditor's
	// job; the viewer is told it cannot.
	for job, wantReadable := range map[string]bool{"auditor": true, "viewer": false} {
		rec := browsers[job].get(urls.CSRApprovers(rolesSigner))
		doc := docOf(t, rec.Body.String())
		unreadable := doc.Find(`[data-testid="approvers-unreadable"]`).Length() > 0
		var approvers []string
		doc.Find(`[data-testid="approver"]`).Each(func(_ int, s *goquery.Selection) {
			approvers = append(approvers, strings.Join(strings.Fields(s.Text()), " "))
		})
		if rec.Code != http.StatusOK || unreadable == wantReadable {
			t.Errorf("the %s on who approves %s: %d, unreadable %v, want readable %v", job, rolesSigner, rec.Code, unreadable, wantReadable)
		}
		if wantReadable && !strings.Contains(strings.Join(approvers, "\n"), "oidc:clusterdesk-role-csr-approver") {
			t.Errorf("the auditor's answer for %s does not name the CSR approvers' group: %q", rolesSigner, approvers)
		}
	}

	// Decisions: only the CSR approver, and only for its signer; the API
	// server refuses the others (the console shows its 403).
	decide := func(job, name, uid string) int {
		return browsers[job].post(t, "/csrs/"+name+"/approve", url.Values{"uid": {uid}, "message": {"roles test"}}).Code
	}
	for _, job := range []string{"viewer", "auditor"} {
		if code := decide(job, ours, oursUID); code != http.StatusForbidden {
			t.Errorf("the %s approving %s: %d, want 403", job, ours, code)
		}
	}
	if code := decide("apfAdmin", ours, oursUID); code != http.StatusForbidden {
		t.Errorf("the APF admin approving %s: %d, want 403", ours, code)
	}
	rec := browsers["csrApprover"].post(t, "/csrs/"+theirs+"/approve", url.Values{"uid": {theirsUID}})
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "signerName") {
		t.Errorf("the CSR approver approving %s of another signer: %d, want 403 naming the signer: %.600s", theirs, rec.Code, rec.Body.String())
	}
	if code := decide("csrApprover", ours, oursUID); code != http.StatusSeeOther {
		t.Errorf("the CSR approver approving %s of %s: %d, want 303", ours, rolesSigner, code)
	}
	c, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, ours, metav1.GetOptions{})
	if err != nil || len(c.Status.Conditions) != 1 || !strings.Contains(c.Status.Conditions[0].Message, "oidc:grace") {
		t.Errorf("%s after the CSR approver's approval: %v, conditions %+v", ours, err, c.Status.Conditions)
	}
	if c, _ := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, theirs, metav1.GetOptions{}); c != nil && len(c.Status.Conditions) != 0 {
		t.Errorf("%s of another signer was decided: %+v", theirs, c.Status.Conditions)
	}

	// Writes through the editor: each admin creates its kind and no other;
	// the viewer, who reads both kinds, is refused by the API server.
	stamp := time.Now().UTC().Format("150405000000")
	fs := "it-roles-fs-" + stamp
	vap := "it-roles-vap-" + stamp
	t.Cleanup(func() {
		_ = cs.FlowcontrolV1().FlowSchemas().Delete(ctx, fs, metav1.DeleteOptions{})
		_ = cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, vap, metav1.DeleteOptions{})
	})
	create := func(job string, kind kube.KindID, text string) int {
		return browsers[job].post(t, urls.Create(kind), url.Values{"yaml": {text}, "op": {"create"}}).Code
	}
	for _, w := range []struct {
		job  string
		kind kube.KindID
		text string
		want int
	}{
		{"viewer", kube.FlowSchemas, flowSchemaYAML(fs), http.StatusForbidden},
		{"admissionAdmin", kube.FlowSchemas, flowSchemaYAML(fs), http.StatusForbidden},
		{"apfAdmin", kube.AdmissionPolicies, admissionPolicyYAML(vap), http.StatusForbidden},
		{"viewer", kube.AdmissionPolicies, admissionPolicyYAML(vap), http.StatusForbidden},
		{"apfAdmin", kube.FlowSchemas, flowSchemaYAML(fs), http.StatusSeeOther},
		{"admissionAdmin", kube.AdmissionPolicies, admissionPolicyYAML(vap), http.StatusSeeOther},
	} {
		if code := create(w.job, w.kind, w.text); code != w.want {
			t.Errorf("the %s creating a %s: %d, want %d", w.job, w.kind, code, w.want)
		}
	}
	if _, err := cs.FlowcontrolV1().FlowSchemas().Get(ctx, fs, metav1.GetOptions{}); err != nil {
		t.Errorf("the APF admin's FlowSchema: %v", err)
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, vap, metav1.GetOptions{}); err != nil {
		t.Errorf("the admission admin's policy: %v", err)
	}
	// The recorded writes (the replay) and traffic (the what-if) are the
	// ledger's too (roles_ledger_integration_test.go).
	checkLedgerTools(t, browsers, vap)

	// The API server's APF load and webhook health come from its /metrics:
	// the admins may read them, the viewer not (the pages then leave the
	// load out).
	for _, c := range []struct {
		group, path string
		want        bool
	}{
		{"oidc:clusterdesk-role-apf-admin", "/metrics", true},
		{"oidc:clusterdesk-role-apf-admin", "/debug/api_priority_and_fairness/dump_priority_levels", true},
		{"oidc:clusterdesk-role-admission-admin", "/metrics", true},
		{"oidc:clusterdesk-role-viewer", "/metrics", false},
	} {
		rev, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "oidc:someone", Groups: []string{c.group, "system:authenticated"},
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Verb: "get", Path: c.path}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rev.Status.Allowed != c.want {
			t.Errorf("%s may get %s: %v, want %v", c.group, c.path, rev.Status.Allowed, c.want)
		}
	}
}

// applyChartRoles renders the chart's roles bound to the role users' groups,
// creates them (deleted when the test ends) and waits until the API server
// authorizes by them.
func applyChartRoles(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	const release = "it-roles"
	args := []string{"template", release, "../charts/clusterdesk", "--show-only", "templates/roles.yaml",
		"--set", "roles.csrApprover.signers={" + rolesSigner + "}"}
	for _, u := range roleUsers {
		args = append(args, "--set", "roles."+u.job+".groups={"+u.group+"}")
	}
	path := filepath.Join(t.TempDir(), "roles.yaml")
	if err := os.WriteFile(path, helmTemplate(t, args...), 0o600); err != nil {
		t.Fatal(err)
	}
	objs := testcluster.ReadManifests(t, path)
	ap := testcluster.NewApplier(t, testcluster.RestConfig(t, testcluster.Admin))
	ctx := context.Background()
	var roles, bindings int
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole":
			roles++
		case "ClusterRoleBinding":
			bindings++
		default:
			t.Fatalf("templates/roles.yaml renders a %s", o.GetKind())
		}
		// What a run killed before its cleanup left.
		_ = cs.RbacV1().ClusterRoles().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		_ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
	}
	for _, o := range objs {
		if _, err := ap.Create(ctx, o, false); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
		t.Cleanup(func() {
			if o.GetKind() == "ClusterRole" {
				_ = cs.RbacV1().ClusterRoles().Delete(context.Background(), o.GetName(), metav1.DeleteOptions{})
			} else {
				_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), o.GetName(), metav1.DeleteOptions{})
			}
		})
	}
	if roles != len(roleUsers) || bindings != len(roleUsers) {
		t.Fatalf("the chart rendered %d roles and %d bindings, want %d each", roles, bindings, len(roleUsers))
	}
	// Both API server instances authorize from their own RBAC informers:
	// wait until the last binding's grant is seen.
	waitFor(t, "the API server to authorize by the applied roles", 15*time.Second, func() bool {
		rev, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "oidc:ivan", Groups: []string{roleUsers[len(roleUsers)-1].group},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "create", Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}}}, metav1.CreateOptions{})
		return err == nil && rev.Status.Allowed
	})
}

// helmTemplate runs the helm CLI that `make helm` builds ($HELM, else
// .cache/bin/helm) with its own empty config and returns what it prints.
func helmTemplate(t *testing.T, args ...string) []byte {
	t.Helper()
	bin := os.Getenv("HELM")
	if bin == "" {
		bin = filepath.Join("..", ".cache", "bin", "helm")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no helm CLI at %s (%v): run `make helm`", bin, err)
	}
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out.Bytes()
}

func docOf(t *testing.T, body string) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// flowSchemaYAML matches only a user that does not exist, so it changes no
// request's priority while it exists.
func flowSchemaYAML(name string) string {
	return `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata:
  name: ` + name + `
spec:
  priorityLevelConfiguration:
    name: global-default
  matchingPrecedence: 9000
  rules:
    - subjects:
        - kind: User
          user:
            name: it-roles-nobody
      nonResourceRules:
        - verbs: ["get"]
          nonResourceURLs: ["/it-roles"]
`
}

// admissionPolicyYAML has no binding, so it judges nothing.
func admissionPolicyYAML(name string) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ` + name + `
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: [""]
        apiVersions: ["v1"]
        operations: ["CREATE"]
        resources: ["configmaps"]
  validations:
    - expression: "true"
`
}
