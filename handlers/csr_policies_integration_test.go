//go:build integration

package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
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
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// TestApprovalPoliciesShadowVerdicts runs the devcluster's demo policies
// (seeded with their CRD) and one broken policy the test writes on real
// requests: a kubelet-serving request for a real Node's own addresses would
// be approved, one with a foreign DNS name is not decided, a client
// certificate named like the node would be denied, and the broken policy
// shows CEL's error with its line. The auditor, who may not list policies,
// is told so.
func TestApprovalPoliciesShadowVerdicts(t *testing.T) {
	ctx := context.Background()
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(cfg)
	node := fmt.Sprintf("it-policy-node-%d", time.Now().UnixNano())
	n, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.9.8.7"}, {Type: corev1.NodeHostName, Address: node}}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	broken := "it-broken-" + fmt.Sprint(time.Now().UnixNano())
	policies := dynamic.NewForConfigOrDie(cfg).Resource(kube.CSRApprovalPolicyResource)
	_, err = policies.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "clusterdesk.io/v1alpha1", "kind": "CSRApprovalPolicy", "metadata": map[string]any{"name": broken},
		"spec": map[string]any{"signerNames": []any{"kubernetes.io/kubelet-serving"}, "decision": "Approve", "reason": "Broken",
			"expression": "request.username != '' &&\n  request.nosuch()"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create a policy (is the CRD seeded?): %v", err)
	}
	t.Cleanup(func() { _ = policies.Delete(context.Background(), broken, metav1.DeleteOptions{}) })

	serving := []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth, certificatesv1.UsageDigitalSignature}
	// The node's kubelet asks: the admin impersonates it (system:masters may).
	asNode := rest.CopyConfig(cfg)
	asNode.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"}}
	kubelet := kubernetes.NewForConfigOrDie(asNode)
	own := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "own", Signer: certificatesv1.KubeletServingSignerName, CommonName: "system:node:" + node,
		Organizations: []string{"system:nodes"}, DNSNames: []string{node}, IPs: []string{"10.9.8.7"}, Usages: serving, Client: kubelet})
	foreign := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "foreign", Signer: certificatesv1.KubeletServingSignerName, CommonName: "system:node:" + node,
		Organizations: []string{"system:nodes"}, DNSNames: []string{node, "evil.example.com"}, Usages: serving, Client: kubelet})
	sneaky := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "sneaky", CommonName: "system:node:" + node, Organizations: []string{"it"}})

	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	ls.waitCached(t, own, foreign, sneaky)
	verdicts := func(name string) map[string]string {
		t.Helper()
		code, doc, _ := ls.get(t, sess, urls.CSRPolicies(name))
		if code != http.StatusOK {
			t.Fatalf("%s: status %d", name, code)
		}
		out := map[string]string{}
		doc.Find(`[data-testid="csr-policy"]`).Each(func(_ int, s *goquery.Selection) {
			p, _ := s.Attr("data-policy")
			out[p] = strings.Join(strings.Fields(s.Text()), " ")
		})
		return out
	}
	v := verdicts(own)
	if !strings.Contains(v["kubelet-serving-own-addresses"], "would approve") || !strings.Contains(v["kubelet-serving-own-addresses"], "KubeletServingOwnAddresses") {
		t.Errorf("own addresses: %q", v)
	}
	if !strings.Contains(v[broken], "does not compile") || !strings.Contains(v[broken], "2:") {
		t.Errorf("the broken policy should say where: %q", v[broken])
	}
	if _, ok := v["deny-client-certificates-named-like-system-users"]; ok {
		t.Error("a policy for client signers is listed on a serving request")
	}
	if v := verdicts(foreign); !strings.Contains(v["kubelet-serving-own-addresses"], "does not decide") {
		t.Errorf("foreign DNS name: %q", v)
	}
	if v := verdicts(sneaky); !strings.Contains(v["deny-client-certificates-named-like-system-users"], "would deny") {
		t.Errorf("a client certificate named like a node: %q", v)
	}

	// The page leaves a placeholder for the panel; htmx gets the panel alone.
	_, page, _ := ls.get(t, sess, urls.CSR(own))
	if href, _ := page.Find(`[data-testid="csr-policies-placeholder"]`).Attr("hx-get"); href != urls.CSRPolicies(own) {
		t.Errorf("the CSR page's policies placeholder loads %q", href)
	}
	r := httptest.NewRequest(http.MethodGet, urls.CSRPolicies(own), nil)
	r.AddCookie(sess)
	r.Header.Set("HX-Request", "true")
	if rec := ls.do(r); rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "<html") {
		t.Errorf("fragment: status %d", rec.Code)
	}
	if code, _, _ := ls.get(t, sess, urls.CSRPolicies("it-no-such-csr")); code != http.StatusNotFound {
		t.Errorf("a missing CSR: status %d", code)
	}

	// Against past decisions: approve a request the policy approves, deny
	// another it approves (a disagreement), deny one it leaves to people.
	decide := func(name string, typ certificatesv1.RequestConditionType, reason string) {
		t.Helper()
		c, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: typ, Status: corev1.ConditionTrue, Reason: reason, Message: "by the test"})
		if _, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, c, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	own2 := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "own2", Signer: certificatesv1.KubeletServingSignerName, CommonName: "system:node:" + node,
		Organizations: []string{"system:nodes"}, DNSNames: []string{node}, Usages: serving, Client: kubelet})
	t.Cleanup(func() {
		_ = cs.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), own2, metav1.DeleteOptions{})
	})
	// A decision clusterdesk approver made (its reason) is no person's: the
	// policy is not compared with it, even where it would disagree.
	own3 := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "own3", Signer: certificatesv1.KubeletServingSignerName, CommonName: "system:node:" + node,
		Organizations: []string{"system:nodes"}, DNSNames: []string{node}, Usages: serving, Client: kubelet})
	decide(own, certificatesv1.CertificateApproved, kube.ReasonApproved)
	decide(own2, certificatesv1.CertificateDenied, kube.ReasonDenied)
	decide(own3, certificatesv1.CertificateDenied, kube.ReasonPolicy)
	decide(foreign, certificatesv1.CertificateDenied, "KubectlDeny")
	waitFor(t, "the decisions to reach the cache", 10*time.Second, func() bool {
		return decidedInCache(ls, foreign) && decidedInCache(ls, own2) && decidedInCache(ls, own3)
	})
	code, agreement, _ := ls.get(t, sess, urls.CSRPolicy("kubelet-serving-own-addresses"))
	number := func(id string) int {
		var n int
		fmt.Sscan(agreement.Find(`[data-testid="`+id+`"]`).Text(), &n)
		return n
	}
	if code != http.StatusOK || number("agreement-checked") < 3 || number("agreement-agreed") < 1 || number("agreement-undecided") < 1 {
		t.Errorf("agreement: status %d, %q", code, agreement.Find(`[data-testid="agreement"]`).Text())
	}
	var rows []string
	agreement.Find(`[data-testid="disagreement"]`).Each(func(_ int, s *goquery.Selection) { rows = append(rows, strings.Join(strings.Fields(s.Text()), " ")) })
	if !slices.ContainsFunc(rows, func(r string) bool {
		return strings.Contains(r, own2) && strings.Contains(r, "Denied by clusterdesk") && strings.Contains(r, "would approve")
	}) || slices.ContainsFunc(rows, func(r string) bool {
		return strings.Contains(r, foreign) || strings.Contains(r, own+":") || strings.Contains(r, own3)
	}) {
		t.Errorf("disagreements %q: want %s (denied by clusterdesk, the policy would approve) and neither %s, %s nor %s (the approver's)", rows, own2, own, foreign, own3)
	}
	if note := strings.Join(strings.Fields(agreement.Find(`[data-testid="agreement-note"]`).Text()), " "); !strings.Contains(note, "decided by clusterdesk approver") {
		t.Errorf("the note says the approver's decisions are left out: %q", note)
	}
	if code, _, _ := ls.get(t, sess, urls.CSRPolicy("it-no-such-policy")); code != http.StatusNotFound {
		t.Errorf("a missing policy: status %d", code)
	}

	// The approver may list CSRs, not the policies; the auditor lists the
	// policies (the CSRApprovalPolicies kind), so it sees the verdicts.
	approver := newLiveServer(t, testcluster.Approver, true)
	approver.waitCached(t, own)
	_, doc, _ := approver.get(t, approver.login(t), urls.CSRPolicies(own))
	if note := doc.Find(`[data-testid="csr-policies-note"]`).Text(); !strings.Contains(note, "may not list CSRApprovalPolicies") {
		t.Errorf("approver: %q", note)
	}
	auditor := newLiveServer(t, testcluster.Auditor, true)
	auditor.waitCached(t, own)
	_, doc, _ = auditor.get(t, auditor.login(t), urls.CSRPolicies(own))
	if note := doc.Find(`[data-testid="csr-policies-note"]`).Text(); strings.Contains(note, "may not list") || doc.Find(`[data-testid="csr-policy"]`).Length() == 0 {
		t.Errorf("auditor: %q, %d policies", note, doc.Find(`[data-testid="csr-policy"]`).Length())
	}
}

// decidedInCache reports whether the live server's cache holds name decided.
func decidedInCache(ls *liveServer, name string) bool {
	c, err := ls.cache.CSR(name)
	return err == nil && len(c.Status.Conditions) > 0
}
