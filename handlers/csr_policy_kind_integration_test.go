//go:build integration

package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// policyText is a CSRApprovalPolicy as the editor's text, expression its CEL.
func policyText(name, expression string) string {
	return "apiVersion: clusterdesk.io/v1alpha1\nkind: CSRApprovalPolicy\nmetadata:\n  name: " + name + "\n" +
		"spec:\n  signerNames: [example.com/it-kind]\n  decision: Deny\n  reason: ItKind\n  expression: |\n" + expression
}

// The CSRApprovalPolicies are a kind like the others: created and validated
// through the console's own editor, listed with their signers, decision and
// whether they run, shown on a detail page; the auditor lists them and may
// not edit them, and a read-only console refuses to write them.
func TestPolicyKindListedEditedAndValidated(t *testing.T) {
	id := kube.CSRApprovalPolicies
	es := newEditServer(t, testcluster.Admin)
	name := uniq("it-kind-policy")
	policies := dynamic.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin)).Resource(kube.CSRApprovalPolicyResource)
	t.Cleanup(func() { _ = policies.Delete(context.Background(), name, metav1.DeleteOptions{}) })

	// CEL that does not compile is refused before it is sent, at its line.
	code, doc, _ := es.submit(t, urls.Create(id), url.Values{"yaml": {policyText(name, "    request.nosuch()\n")}, "op": {"create"}})
	if title, msg, _ := problem(doc); code != http.StatusUnprocessableEntity || title != "The policy would not run" || !strings.Contains(msg, "nosuch") {
		t.Fatalf("create with broken CEL: status %d, %q: %q", code, title, msg)
	}
	code, _, hdr := es.submit(t, urls.Create(id), url.Values{"yaml": {policyText(name, "    request.username == 'it-kind-nobody'\n")}, "op": {"create"}})
	if code != http.StatusSeeOther || hdr.Get("Location") != urls.Object(id, name) {
		t.Fatalf("create: status %d, Location %q, want 303 to %s", code, hdr.Get("Location"), urls.Object(id, name))
	}

	// The create waited for the cache: the list and the page show it.
	code, doc, _ = es.get(t, es.sess, urls.List(id))
	row := doc.Find(`tr[id="row-csrapprovalpolicies-` + name + `"]`)
	if code != http.StatusOK || row.Length() != 1 || !strings.Contains(row.Text(), "example.com/it-kind") ||
		!strings.Contains(row.Text(), "Deny") || !strings.Contains(row.Text(), "Runs") {
		t.Fatalf("list: status %d, row %q", code, strings.Join(strings.Fields(row.Text()), " "))
	}
	code, doc, _ = es.get(t, es.sess, urls.Object(id, name))
	if code != http.StatusOK || !strings.Contains(doc.Find(`[data-testid="policy-expression"]`).Text(), "it-kind-nobody") ||
		doc.Find(`a[href="`+urls.CSRPolicy(name)+`"]`).Length() == 0 || doc.Find(`a[href="`+urls.Edit(id, name)+`"]`).Length() == 0 {
		t.Fatalf("detail: status %d; want the expression, the comparison and the Edit link", code)
	}

	// Edited in the editor: an update that would not run is refused.
	ed := es.openEditor(t, urls.Edit(id, name))
	code, doc, _ = es.submit(t, urls.EditorOf(urls.Object(id, name)).Apply, ed.form(strings.Replace(ed.text, "request.username == 'it-kind-nobody'", "1 + 2", 1)))
	if _, msg, _ := problem(doc); code != http.StatusUnprocessableEntity || !strings.Contains(msg, "must be a bool") {
		t.Errorf("update to a non-bool: status %d, %q", code, msg)
	}

	// The auditor lists the policies, and gets no editor.
	aud := newEditServer(t, testcluster.Auditor)
	waitFor(t, "the auditor's cache to hold the policy", 20*time.Second, func() bool {
		_, err := aud.cache.Get(id, name)
		return err == nil
	})
	if code, doc, _ := aud.get(t, aud.sess, urls.List(id)); code != http.StatusOK || doc.Find(`tr[id="row-csrapprovalpolicies-`+name+`"]`).Length() != 1 {
		t.Errorf("auditor's list: status %d", code)
	}
	if code, doc, _ := aud.get(t, aud.sess, urls.Object(id, name)); code != http.StatusOK || doc.Find(`a[href="`+urls.Edit(id, name)+`"]`).Length() != 0 {
		t.Errorf("auditor's page: status %d, want 200 without an Edit link", code)
	}
	aed := aud.openEditor(t, urls.Edit(id, name)) // the auditor may read it
	code, doc, _ = aud.submit(t, urls.EditorOf(urls.Object(id, name)).Apply, aed.form(strings.Replace(aed.text, "decision: Deny", "decision: Approve", 1)))
	if title, _, _ := problem(doc); code != http.StatusForbidden || title != "Forbidden by the API server" {
		t.Errorf("auditor's apply: status %d, %q, want 403", code, title)
	}

	// A read-only console refuses the write before it reaches the API server.
	ro := newLiveServer(t, testcluster.Admin, true)
	sess := ro.login(t)
	if rec := ro.post(t, sess, urls.Create(id), url.Values{"yaml": {policyText(name+"-ro", "    true\n")}, "op": {"create"}}); rec.Code != http.StatusForbidden {
		t.Errorf("read-only create: status %d, want 403", rec.Code)
	}
}

// The kind follows its CRD without a restart: deleted, the cache empties and
// the list says the kind is not installed; created again, the policies
// appear. The CRD and the policies there were are restored, since the other
// tests of the run share the devcluster.
func TestPolicyKindFollowsItsCRD(t *testing.T) {
	ctx := context.Background()
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	ext := apiextensionsclient.NewForConfigOrDie(cfg)
	policies := dynamic.NewForConfigOrDie(cfg).Resource(kube.CSRApprovalPolicyResource)
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, csrpolicy.CRD, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the devcluster's seed installs the CRD: %v", err)
	}
	before, err := policies.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ls := newLiveServerAs(t, cfg, testcluster.Admin, false)
	sess := ls.login(t)
	id := kube.CSRApprovalPolicies
	waitFor(t, "the kind to sync", 20*time.Second, func() bool { return ls.cache.Status(id).State == kube.StateSynced })

	restore := func() {
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, csrpolicy.CRD, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			fresh := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crd.Name, Labels: crd.Labels, Annotations: crd.Annotations}, Spec: crd.Spec}
			if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, fresh, metav1.CreateOptions{}); err != nil {
				t.Errorf("restore the CRD: %v", err)
				return
			}
		}
		waitFor(t, "the CRD to serve again", 30*time.Second, func() bool {
			_, err := policies.List(ctx, metav1.ListOptions{Limit: 1})
			return err == nil
		})
		for _, p := range before.Items {
			o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": p.GetAPIVersion(), "kind": p.GetKind(), "spec": p.Object["spec"]}}
			o.SetName(p.GetName())
			o.SetLabels(p.GetLabels())
			o.SetAnnotations(p.GetAnnotations())
			if _, err := policies.Create(ctx, o, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Errorf("restore policy %s: %v", p.GetName(), err)
			}
		}
	}
	t.Cleanup(restore)

	if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, csrpolicy.CRD, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the kind to be not served", 60*time.Second, func() bool {
		_, err := ls.cache.List(id)
		return errors.Is(err, kube.ErrNotServed)
	})
	code, doc, _ := ls.get(t, sess, urls.List(id))
	if banner := doc.Find(`[data-testid="banner-not-served"]`).Text(); code != http.StatusOK || !strings.Contains(banner, "not installed in this cluster") {
		t.Fatalf("list without the CRD: status %d, banner %q", code, banner)
	}
	// The home page's card says the same, as a note rather than an error.
	if _, doc, _ := ls.get(t, sess, "/"); !strings.Contains(doc.Find(`[data-testid="home-kind-`+string(id)+`"]`).Text(), "Not installed in this cluster") {
		t.Errorf("home card without the CRD: %q", doc.Find(`[data-testid="home-kind-`+string(id)+`"]`).Text())
	}

	restore()
	waitFor(t, "the policies to be listed again", 30*time.Second, func() bool {
		objs, err := ls.cache.List(id)
		return err == nil && len(objs) == len(before.Items)
	})
	code, doc, _ = ls.get(t, sess, urls.List(id))
	if code != http.StatusOK || doc.Find(`[data-testid="banner-not-served"]`).Length() != 0 {
		t.Errorf("list with the CRD again: status %d", code)
	}
}
