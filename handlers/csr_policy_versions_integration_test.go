//go:build integration

package handlers

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/approver"
	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/ingest"
	"github.com/clusterdesk/clusterdesk/internal/ingest/ingesttest"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// TestEveryDecisionTracesToThePolicyVersion (issue 47, item 4): the real
// approver, run with a policy at generation 1, approves a request; the policy
// is edited (generation 2, another expression) and approves a second one.
// Each condition names its version (name, generation, the expression's
// hash); the API server's audit events reach a SQLite ledger through the
// devcluster's audit webhook, and the policy's page in the console lists both
// versions with one approval each and its request.
func TestEveryDecisionTracesToThePolicyVersion(t *testing.T) {
	ctx := context.Background()
	adminCfg := testcluster.RestConfig(t, testcluster.Admin)
	admin := kubernetes.NewForConfigOrDie(adminCfg)
	store, err := ledger.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ingesttest.ServeAuditWebhook(t, ingest.Options{Store: store})

	s := strconv.FormatInt(time.Now().UnixNano(), 36)
	signer, name, label := "example.com/it-trace-"+s, "it-trace-"+s, "it-trace-"+s
	expr := func(suffix string) string {
		return "request.subject.commonName.startsWith('it-trace-" + s + "-" + suffix + "')"
	}
	policies := dynamic.NewForConfigOrDie(adminCfg).Resource(kube.CSRApprovalPolicyResource)
	_, err = policies.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "clusterdesk.io/v1alpha1", "kind": "CSRApprovalPolicy",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"it-trace": label}},
		"spec":     map[string]any{"signerNames": []any{signer}, "decision": "Approve", "reason": "ItTrace", "message": "traced", "expression": expr("one")},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the policy (is the CRD seeded?): %v", err)
	}
	t.Cleanup(func() { _ = policies.Delete(context.Background(), name, metav1.DeleteOptions{}) })

	// The approver as cmd/clusterdesk's `approver` runs it, as the admin
	// (who may approve any signer), for this test's policy only.
	a, err := approver.New(approver.Config{Rest: adminCfg, PolicySelector: "it-trace=" + label,
		Audit: audit.New(audit.Options{}), User: "admin", Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	actx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := a.Start(actx); err == nil {
			a.Run(actx)
		}
	}()
	t.Cleanup(func() { stop(); <-done })

	decided := func(csr string) certificatesv1.CertificateSigningRequestCondition {
		t.Helper()
		var got certificatesv1.CertificateSigningRequestCondition
		waitFor(t, csr+" decided by the approver", 60*time.Second, func() bool {
			c, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, csr, metav1.GetOptions{})
			if err != nil {
				return false
			}
			for _, cond := range c.Status.Conditions {
				if cond.Type == certificatesv1.CertificateApproved || cond.Type == certificatesv1.CertificateDenied {
					got = cond
					return true
				}
			}
			return false
		})
		return got
	}
	want1 := csrpolicy.Version{Policy: name, Generation: 1, Hash: csrpolicy.ExpressionHash(expr("one"))}
	first := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "one", Signer: signer, CommonName: "it-trace-" + s + "-one"})
	if c := decided(first); c.Type != certificatesv1.CertificateApproved || c.Message != csrpolicy.DecisionMessage(want1, csrpolicy.Approve, "traced") {
		t.Fatalf("first: %s %q, want approved by %+v", c.Type, c.Message, want1)
	}

	// Edited: generation 2 approves what generation 1 did not.
	obj, err := policies.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(obj.Object, expr("two"), "spec", "expression"); err != nil {
		t.Fatal(err)
	}
	if obj, err = policies.Update(ctx, obj, metav1.UpdateOptions{}); err != nil || obj.GetGeneration() != 2 {
		t.Fatalf("update the policy: generation %d, %v", obj.GetGeneration(), err)
	}
	want2 := csrpolicy.Version{Policy: name, Generation: 2, Hash: csrpolicy.ExpressionHash(expr("two"))}
	second := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "two", Signer: signer, CommonName: "it-trace-" + s + "-two"})
	if c := decided(second); c.Type != certificatesv1.CertificateApproved || c.Message != csrpolicy.DecisionMessage(want2, csrpolicy.Approve, "traced") {
		t.Fatalf("second: %s %q, want approved by %+v", c.Type, c.Message, want2)
	}
	if want1.Hash == want2.Hash {
		t.Fatal("the two expressions hash alike")
	}

	// The API server's audit events reach the ledger (its webhook batches).
	waitFor(t, "both decisions in the ledger", 60*time.Second, func() bool {
		vs, err := store.(ledger.PolicyStore).PolicyVersions(ctx, name, 5)
		return err == nil && len(vs.Versions) == 2
	})

	ls := newLiveServer(t, testcluster.Admin, false, withLedger(store))
	sess := ls.login(t)
	waitFor(t, "the console's cache to hold the policy's generation 2", 20*time.Second, func() bool {
		m, err := ls.cache.Meta(kube.CSRApprovalPolicies, name)
		return err == nil && m.GetGeneration() == 2
	})
	code, doc, _ := ls.get(t, sess, urls.Object(kube.CSRApprovalPolicies, name))
	if code != 200 {
		t.Fatalf("the policy's page: status %d", code)
	}
	section := doc.Find(`[data-testid="` + present.PolicyVersionsTestID + `"]`)
	var rows [][]string
	section.Find("tbody tr").Each(func(_ int, tr *goquery.Selection) {
		var cells []string
		tr.Find("td").Each(func(_ int, td *goquery.Selection) {
			cells = append(cells, strings.Join(strings.Fields(td.Text()), " "))
		})
		rows = append(rows, cells)
	})
	if len(rows) != 2 {
		t.Fatalf("the versions section: %d rows %q, want 2 (%q)", len(rows), rows, strings.Join(strings.Fields(section.Text()), " "))
	}
	for i, w := range []struct {
		gen, hash, csr string
	}{{"2 (current)", want2.Hash, second}, {"1", want1.Hash, first}} {
		r := rows[i]
		if len(r) != 5 || r[0] != w.gen || r[1] != w.hash || r[2] != "1" || r[3] != "0" || !strings.Contains(r[4], w.csr+" approved") || !strings.Contains(r[4], "by admin") {
			t.Errorf("row %d: %q, want generation %s, hash %s, 1 approved, 0 denied, %s", i, r, w.gen, w.hash, w.csr)
		}
	}
}
