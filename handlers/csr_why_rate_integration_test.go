//go:build integration

package handlers

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrwhy"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// TestWhyPendingHeldByARateLimit: a policy approves every request of its
// signer, at most once per requester per hour, and the approver leads. Two
// requests of one requester (made as that user on the devcluster) are both
// "deciding"; once an admin approves the first through the console, the
// queue's row, its why=RateLimited filter and the second's page say it is
// held by the rate limit, as the approver would hold it.
func TestWhyPendingHeldByARateLimit(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(cfg)
	run := fmt.Sprint(time.Now().UnixNano())
	signer, policy, requester := "example.com/it-rate-"+run, "it-rate-"+run, "it-rate-requester-"+run
	policies := dynamic.NewForConfigOrDie(cfg).Resource(kube.CSRApprovalPolicyResource)
	if _, err := policies.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "clusterdesk.io/v1alpha1", "kind": "CSRApprovalPolicy", "metadata": map[string]any{"name": policy},
		"spec": map[string]any{"signerNames": []any{signer}, "decision": "Approve", "reason": "ItRate", "expression": "true",
			"rateLimit": map[string]any{"maxApprovals": int64(1), "period": "1h"}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create policy (is the CRD with spec.rateLimit seeded?): %v", err)
	}
	t.Cleanup(func() { _ = policies.Delete(context.Background(), policy, metav1.DeleteOptions{}) })
	// The approver leads: its Lease renewed now, for an hour.
	leaseName, holder, secs := "it-rate-"+run, "it-approver", int32(3600)
	renewed := metav1.NewMicroTime(time.Now())
	if _, err := cs.CoordinationV1().Leases("default").Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: leaseName},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &renewed, AcquireTime: &renewed},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoordinationV1().Leases("default").Delete(context.Background(), leaseName, metav1.DeleteOptions{})
	})
	// The requester: a user of its own, so that no other test's approvals
	// count against it (system:masters lets it create requests).
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: requester, Groups: []string{"system:masters", "system:authenticated"}}
	client := kubernetes.NewForConfigOrDie(as)
	first := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "first", Signer: signer, Client: client})
	second := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "second", Signer: signer, Client: client})

	ls, sess := whyConsole(t, ctx, cfg, leaseName, policy)
	ls.waitCached(t, first, second)

	// whyOf is each named row's reason code and line on the pending tab.
	whyOf := func(filter url.Values) map[string][2]string {
		_, doc, _ := ls.get(t, sess, urls.CSRs+"?"+filter.Encode())
		out := map[string][2]string{}
		for _, name := range []string{first, second} {
			cell := doc.Find(`tr[data-name="` + name + `"] td[data-column="why"]`)
			if cell.Length() == 0 {
				continue
			}
			title, _ := cell.Attr("title")
			out[name] = [2]string{strings.TrimSpace(cell.Text()), title}
		}
		return out
	}
	pending := url.Values{"state": {"pending"}, "q": {run}}
	for name, got := range whyOf(pending) {
		if got[0] != csrwhy.Deciding.Short() {
			t.Errorf("before any approval, %s: %q (%s); want %q", name, got[0], got[1], csrwhy.Deciding.Short())
		}
	}
	if code, _ := ls.bulk(t, sess, "approve", first); code != 200 {
		t.Fatalf("approving %s through the console: %d", first, code)
	}
	waitFor(t, "the console's cache to see "+first+" approved", 10*time.Second, func() bool {
		c, err := ls.cache.CSR(first)
		if err != nil {
			return false
		}
		_, ok := csrpolicy.ApprovedAt(c)
		return ok
	})
	words := []string{"held by the rate limit of the policy " + policy, "1 of 1 approvals for " + requester + " within 1h"}
	got := whyOf(pending)[second]
	if got[0] != csrwhy.RateLimited.Short() {
		t.Errorf("after %s's approval, %s: %q (%s); want %q", first, second, got[0], got[1], csrwhy.RateLimited.Short())
	}
	for _, w := range words {
		if !strings.Contains(got[1], w) {
			t.Errorf("the row's line %q lacks %q", got[1], w)
		}
	}
	if held := whyOf(url.Values{"why": {string(csrwhy.RateLimited)}, "q": {run}}); len(held) != 1 || held[second][0] == "" {
		t.Errorf("why=RateLimited shows %v; want %s alone", held, second)
	}
	_, doc, _ := ls.get(t, sess, urls.CSR(second))
	line := doc.Find(`[data-testid="csr-why"]`)
	if c, _ := line.Attr("data-why"); c != string(csrwhy.RateLimited) {
		t.Errorf("%s's page says %q (%s); want %s", second, c, line.Text(), csrwhy.RateLimited)
	}
	for _, w := range words {
		if !strings.Contains(line.Text(), w) {
			t.Errorf("the page's line %q lacks %q", line.Text(), w)
		}
	}
}
