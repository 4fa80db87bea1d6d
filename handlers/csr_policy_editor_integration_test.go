//go:build integration

package handlers

import (
	"context"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// A CSRApprovalPolicy whose CEL does not compile passes its CRD's schema (any
// string is an expression to the API server): the console's editor refuses
// it before sending, creating or updating, and points at the line of the
// expression where CEL found the problem; a policy that compiles is written.
func TestPolicyEditorRefusesCELThatDoesNotCompile(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	name := uniq("it-editor-policy")
	gvr := schema.GroupVersionResource{Group: "clusterdesk.io", Version: "v1alpha1", Resource: "csrapprovalpolicies"}
	policies := dynamic.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin)).Resource(gvr)
	t.Cleanup(func() { _ = policies.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	text := func(expression string) string {
		return "apiVersion: clusterdesk.io/v1alpha1\nkind: CSRApprovalPolicy\nmetadata:\n  name: " + name + "\n" +
			"spec:\n  signerNames: [example.com/it-editor]\n  decision: Deny\n  reason: ItEditor\n  expression: |\n" + expression
	}
	// Line 10 is the expression's first line; CEL's error is on its second.
	broken := text("    request.username != '' &&\n    request.nosuch()\n")
	code, doc, _ := es.submit(t, urls.CRCreate(csrpolicy.CRD), map[string][]string{"yaml": {broken}, "op": {"create"}})
	title, msg, _ := problem(doc)
	line := doc.Find(`[data-testid="editor-problem-line"]`).AttrOr("data-line", "")
	if code != http.StatusUnprocessableEntity || title != "The policy would not run" || !strings.Contains(msg, "nosuch") || line != "11" {
		t.Fatalf("create with broken CEL: status %d, %q: %q at line %q, want 422 at line 11", code, title, msg, line)
	}
	if _, err := policies.Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the refused policy reached the API server: %v", err)
	}

	good := text("    request.username == 'it-editor-nobody'\n")
	code, _, hdr := es.submit(t, urls.CRCreate(csrpolicy.CRD), map[string][]string{"yaml": {good}, "op": {"create"}})
	page := urls.CRInstance(csrpolicy.CRD, "", name)
	if code != http.StatusSeeOther || hdr.Get("Location") != page {
		t.Fatalf("create a policy that compiles: status %d, Location %q", code, hdr.Get("Location"))
	}

	// Updating it with an expression that is not a bool is refused too, and
	// the stored policy stays as it was.
	ed := es.openEditor(t, page+"/edit")
	notBool := strings.Replace(ed.text, "request.username == 'it-editor-nobody'", "1 + 2", 1)
	code, doc, _ = es.submit(t, page+"/apply", ed.form(notBool))
	if title, msg, _ := problem(doc); code != http.StatusUnprocessableEntity || !strings.Contains(msg, "must be a bool") {
		t.Errorf("update to a non-bool: status %d, %q: %q", code, title, msg)
	}
	got, err := policies.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if expr, _, _ := unstructured.NestedString(got.Object, "spec", "expression"); !strings.Contains(expr, "it-editor-nobody") {
		t.Errorf("the refused update changed the policy: %q", expr)
	}
}
