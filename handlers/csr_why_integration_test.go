//go:build integration

package handlers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
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

// TestWhyPendingOnTheQueue creates, on the devcluster, requests in each
// situation the API server lets a test make (no policy for the signer, a
// false clause, two policies disagreeing, a policy covering other
// requesters, a newer request of the same subject, a policy that would
// approve while the approver's Lease is stale), and checks the queue's "Why
// pending" column, its why= filter and the request's page line.
func TestWhyPendingOnTheQueue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(cfg)
	run := fmt.Sprint(time.Now().UnixNano())
	signer, scoped, none := "example.com/it-why-"+run, "example.com/it-why-scoped-"+run, "example.com/it-why-none-"+run
	policies := dynamic.NewForConfigOrDie(cfg).Resource(kube.CSRApprovalPolicyResource)
	for _, p := range []struct {
		name, signer, expr, decision string
		requesters                   map[string]any
	}{
		{"it-why-approve-" + run, signer, `request.subject.organizations.exists(o, o in ["it-ok", "it-both"]) && request.keyBits > 0`, "Approve", nil},
		{"it-why-deny-" + run, signer, `request.subject.organizations.exists(o, o in ["it-bad", "it-both"])`, "Deny", nil},
		{"it-why-scoped-" + run, scoped, `true`, "Approve", map[string]any{"users": []any{"it-nobody"}, "groups": []any{"it-nogroup"}}},
	} {
		spec := map[string]any{"signerNames": []any{p.signer}, "decision": p.decision, "reason": "ItWhy", "expression": p.expr}
		if p.requesters != nil {
			spec["requesters"] = p.requesters
		}
		_, err := policies.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "clusterdesk.io/v1alpha1", "kind": "CSRApprovalPolicy", "metadata": map[string]any{"name": p.name}, "spec": spec,
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create policy %s (is the CRD with spec.requesters seeded?): %v", p.name, err)
		}
		t.Cleanup(func() { _ = policies.Delete(context.Background(), p.name, metav1.DeleteOptions{}) })
	}
	// The approver's Lease: held, but not renewed for 5 minutes.
	leaseName, holder, secs := "it-why-"+run, "it-gone", int32(15)
	stale := metav1.NewMicroTime(time.Now().Add(-5 * time.Minute))
	if _, err := cs.CoordinationV1().Leases("default").Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: leaseName},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &stale, AcquireTime: &stale},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoordinationV1().Leases("default").Delete(context.Background(), leaseName, metav1.DeleteOptions{})
	})

	ok := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "ok", Signer: signer, Organizations: []string{"it-ok"}})
	other := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "other", Signer: signer, Organizations: []string{"it-other"}})
	both := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "both", Signer: signer, Organizations: []string{"it-both"}})
	nopol := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "nopol", Signer: none})
	notfor := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "notfor", Signer: scoped})
	older := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "dup", Signer: signer, CommonName: "it-why-twin-" + run, Organizations: []string{"it-other"}})
	time.Sleep(1100 * time.Millisecond) // creationTimestamp has seconds
	newer := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "dup2", Signer: signer, CommonName: "it-why-twin-" + run, Organizations: []string{"it-other"}})

	ls, sess := whyConsole(t, ctx, cfg, leaseName, "it-why-scoped-"+run, "it-why-deny-"+run)
	ls.waitCached(t, ok, other, both, nopol, notfor, older, newer)

	want := map[string]struct {
		code  csrwhy.Code
		words []string
	}{
		ok:     {csrwhy.NoLeader, []string{"would approve it", "held by it-gone", "default/" + leaseName}},
		other:  {csrwhy.ClauseFalse, []string{"clause 1 of 2", `request.subject.organizations = ["it-other"]`}},
		both:   {csrwhy.Conflict, []string{"it-why-approve-" + run + " would approve it, it-why-deny-" + run + " would deny it"}},
		nopol:  {csrwhy.NoPolicy, []string{"no policy names the signer " + none}},
		notfor: {csrwhy.NotForRequester, []string{"users it-nobody", "groups it-nogroup"}},
	}
	// The two requests of one subject are a retry storm, one group row on
	// the queue: its members are listed one by one in the group's view.
	twins := map[string]struct {
		code  csrwhy.Code
		words []string
	}{
		older: {csrwhy.Superseded, []string{"newer request " + newer}},
		newer: {csrwhy.ClauseFalse, nil},
	}
	// The column: each row's short words, its line as the title.
	_, doc, _ := ls.get(t, sess, urls.CSRs+"?"+url.Values{"state": {"pending"}, "q": {run}}.Encode())
	for name, w := range want {
		cell := doc.Find(`tr[data-name="` + name + `"] td[data-column="why"]`)
		title, _ := cell.Attr("title")
		if got := strings.TrimSpace(cell.Text()); got != w.code.Short() {
			t.Errorf("%s: column %q (%s); want %q", name, got, title, w.code.Short())
		}
		for _, word := range w.words {
			if !strings.Contains(title, word) {
				t.Errorf("%s: column title %q lacks %q", name, title, word)
			}
		}
	}
	group, _ := doc.Find(`tr[data-name^="s-"]`).Attr("data-name")
	if group == "" {
		t.Fatal("no group row for the twins")
	}
	_, gdoc, _ := ls.get(t, sess, urls.CSRs+"?"+url.Values{"group": {group}}.Encode())
	for name, w := range twins {
		cell := gdoc.Find(`tr[data-name="` + name + `"] td[data-column="why"]`)
		title, _ := cell.Attr("title")
		if got := strings.TrimSpace(cell.Text()); got != w.code.Short() {
			t.Errorf("%s: column %q (%s); want %q", name, got, title, w.code.Short())
		}
		for _, word := range w.words {
			if !strings.Contains(title, word) {
				t.Errorf("%s: column title %q lacks %q", name, title, word)
			}
		}
	}
	_, gdoc, _ = ls.get(t, sess, urls.CSRs+"?"+url.Values{"group": {group}, "why": {string(csrwhy.Superseded)}}.Encode())
	if n := gdoc.Find(`[data-testid="list-row"]`).Length(); n != 1 || gdoc.Find(`tr[data-name="`+older+`"]`).Length() != 1 {
		t.Errorf("why=Superseded in the group: %d rows, want the older alone", n)
	}
	want[older] = twins[older]
	// The filter: exactly the rows pending for that reason.
	for _, code := range []csrwhy.Code{csrwhy.NoLeader, csrwhy.Conflict, csrwhy.NoPolicy, csrwhy.NotForRequester} {
		_, doc, _ := ls.get(t, sess, urls.CSRs+"?"+url.Values{"why": {string(code)}, "q": {run}}.Encode())
		got := map[string]bool{}
		doc.Find(`[data-testid="list-row"]`).Each(func(_ int, s *goquery.Selection) { n, _ := s.Attr("data-name"); got[n] = true })
		for name, w := range want {
			if name == older {
				continue
			}
			if got[name] != (w.code == code) {
				t.Errorf("why=%s: row %s shown %v", code, name, got[name])
			}
		}
	}
	// The page's line.
	for _, name := range []string{ok, other, older} {
		_, doc, _ := ls.get(t, sess, urls.CSR(name))
		line := doc.Find(`[data-testid="csr-why"]`)
		if c, _ := line.Attr("data-why"); c != string(want[name].code) {
			t.Errorf("%s: page says %q (%s); want %s", name, c, line.Text(), want[name].code)
		}
		for _, word := range want[name].words {
			if !strings.Contains(line.Text(), word) {
				t.Errorf("%s: page line %q lacks %q", name, line.Text(), word)
			}
		}
	}

	// Which requesters each policy covers (issue 47, item 2): the verdict
	// panels, the agreement page and "who approves" say so.
	scopedPolicy, covers := "it-why-scoped-"+run, "users it-nobody; groups it-nogroup"
	text := func(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }
	_, doc, _ = ls.get(t, sess, urls.CSRPolicies(notfor))
	if got := text(doc.Find(`[data-testid="csr-policy"][data-policy="` + scopedPolicy + `"]`)); !strings.Contains(got, "not this requester") || !strings.Contains(got, "covers "+covers) {
		t.Errorf("the verdict panel of %s: %q, want the policy not covering it and whom it covers", notfor, got)
	}
	_, doc, _ = ls.get(t, sess, urls.CSRPolicies(ok))
	if got := text(doc.Find(`[data-testid="csr-policy"][data-policy="it-why-approve-` + run + `"]`)); !strings.Contains(got, "would approve") || !strings.Contains(got, "covers every requester") {
		t.Errorf("the verdict panel of %s: %q", ok, got)
	}
	_, doc, _ = ls.get(t, sess, urls.CSRPolicy(scopedPolicy))
	if got := text(doc.Find(`[data-testid="agreement-requesters"]`)); !strings.Contains(got, covers) {
		t.Errorf("the agreement page: %q, want %q", got, covers)
	}
	_, doc, _ = ls.get(t, sess, urls.CSRApprovers(scoped))
	if got := text(doc.Find(`[data-testid="approver-policies"] [data-policy="` + scopedPolicy + `"]`)); !strings.Contains(got, "Approve, covers "+covers) {
		t.Errorf("who approves %s: %q", scoped, got)
	}
	_, doc, _ = ls.get(t, sess, urls.CSRApproversRoute)
	if got := text(doc.Find(`[data-testid="signer-row"][data-signer="` + scoped + `"] [data-policy="` + scopedPolicy + `"]`)); !strings.Contains(got, "covers "+covers) {
		t.Errorf("who approves each signer, %s: %q", scoped, got)
	}
}

// whyConsole is an admin's console on the devcluster that runs the
// CSRApprovalPolicies (once its policy cache holds the named ones) and
// reads the approver's Lease default/leaseName, signed in.
func whyConsole(t *testing.T, ctx context.Context, cfg *rest.Config, leaseName string, policies ...string) (*liveServer, *http.Cookie) {
	t.Helper()
	set := watchedPolicies(t, ctx, cfg, policies...)
	cache := syncedCache(t, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ls := newLiveServerWith(t, cfg, testcluster.Admin, false, func(d *Deps) {
		d.Policies = set
		d.ApproverLease, d.ReadApproverLease = "default/"+leaseName, cache.LeaseReader("default", leaseName)
	})
	return ls, ls.login(t)
}

// watchedPolicies is the cluster's CSRApprovalPolicies as a console runs
// them (a policy cache watching them until ctx ends), once they include
// the named ones.
func watchedPolicies(t *testing.T, ctx context.Context, cfg *rest.Config, names ...string) *csrpolicy.Set {
	t.Helper()
	pc, err := kube.NewPolicyCache(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	go pc.Run(ctx)
	set := csrpolicy.NewSet(pc)
	waitFor(t, "the policy cache to hold the test's policies", 20*time.Second, func() bool {
		c := set.Current()
		for _, name := range names {
			if _, ok := c.Lookup(name); !ok {
				return false
			}
		}
		return c.Err == nil
	})
	return set
}
