//go:build integration

package handlers

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// An open queue view receives the new verdicts when a policy is edited, no
// CSR changing: the policies' change re-sends the views that show verdicts.
func TestOpenQueueViewGetsNewVerdictsAfterPolicyEdit(t *testing.T) {
	ctx := context.Background()
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	signer := "example.com/it-live-policy-" + uniq("s")
	name := uniq("it-live-policy")
	policies := dynamic.NewForConfigOrDie(cfg).Resource(kube.CSRApprovalPolicyResource)
	pol := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "clusterdesk.io/v1alpha1", "kind": "CSRApprovalPolicy", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"signerNames": []any{signer}, "decision": "Approve", "reason": "ItLive", "expression": "true"},
	}}
	if _, err := policies.Create(ctx, pol, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = policies.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	csr := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "live-policy", Signer: signer})

	s := newLiveStack(t)
	set := csrpolicy.NewSet(s.cache.Policies()) // the cache's own watch, as main wires it
	waitFor(t, "the policy and the request in the cache", 20*time.Second, func() bool {
		_, found := set.Current().Lookup(name)
		_, err := s.cache.CSR(csr)
		return found && err == nil
	})
	access, err := kube.NewAccess(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, sess := s.serverWith(t, access, func(d *Deps) { d.Policies = set })
	view := csrqueue.ParseQuery(url.Values{"signer": {signer}, "state": {"pending"}}).Values().Encode()
	events := subscribe(t, srv, sess, url.Values{"kinds": {"csrs"}, "rows": {"csrs"}, "view": {view}, "since": {s.streams.Cursor()}}.Encode())
	await(t, events, 10*time.Second, "hello", func(sseclient.Event) bool { return true })

	got, err := policies.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(got.Object, "Deny", "spec", "decision")
	if _, err := policies.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	denied := func(html string) bool {
		return strings.Contains(html, csr) && strings.Contains(html, `data-verdict="deny"`)
	}
	await(t, events, 20*time.Second, "the view's row with the deny verdict", func(ev sseclient.Event) bool {
		switch {
		case ev.Event == live.ResyncEvent:
			// A batch of other CSR changes too large to send as rows (other
			// tests' cleanups) tells the tab to fetch its view, as live.js does.
			return denied(getQueueView(t, srv, sess, view))
		case ev.Event != csrViewEvent:
			return false
		}
		html, err := page.InflateCSRView([]byte(ev.Data))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(html), "data-refetch") { // the view's own "fetch me again"
			return denied(getQueueView(t, srv, sess, view))
		}
		return denied(string(html))
	})
}

// getQueueView is the queue's view as a tab fetches it again (live.js's
// refetch): the page with the view's query, as the signed-in user.
func getQueueView(t *testing.T, srv *httptest.Server, sess *http.Cookie, view string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/csrs?"+view, nil)
	req.AddCookie(sess)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("refetching the view: %d %v", resp.StatusCode, err)
	}
	return string(b)
}
