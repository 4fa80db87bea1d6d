//go:build integration

package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// TestEditorReplaysThePolicyBeingEditedThenApplies: on the devcluster, the
// deployed policy's editor (read from the API server) offers the replay; its
// text, edited to want a team label, replays with the deployed binding
// against the CSIDriver write the audit webhook recorded, and would have
// denied it; the editor that comes back holds the text, starting version and
// base, and its form applies as it is.
func TestEditorReplaysThePolicyBeingEditedThenApplies(t *testing.T) {
	f := newReplayFixture(t)
	ts := newLiveServer(t, testcluster.Admin, false, withLedger(f.store), withEditorAs(t, testcluster.Admin))
	sess := ts.login(t)
	edit := urls.Edit(kube.AdmissionPolicies, f.name)
	var doc *goquery.Document
	waitFor(t, "the policy's editor", 30*time.Second, func() bool {
		var code int
		code, doc = ts.getDoc(t, sess, edit)
		return code == http.StatusOK
	})
	action, _ := doc.Find("[data-testid=editor-replay-submit]").Attr("formaction")
	if action != urls.EditorReplay(kube.AdmissionPolicies, f.name) {
		t.Fatalf("replay button's formaction %q", action)
	}
	form := editorFormOf(doc)
	text := form.Get("yaml")
	edited := strings.Replace(text, "object.metadata.name != ''", "has(object.metadata.labels) && 'team' in object.metadata.labels", 1)
	if edited == text {
		t.Fatalf("the editor's text has not the deployed expression: %s", text)
	}
	form.Set("yaml", edited)
	form.Set("window", "1h")

	rec, back := ts.request(t, sess, http.MethodPost, action, form, false)
	if rec.Code != http.StatusOK || back.Find("[data-testid=editor-yaml]").Text() != edited {
		t.Fatalf("status %d, the editor's text after the replay: %q", rec.Code, back.Find("[data-testid=editor-yaml]").Text())
	}
	if basis := back.Find("[data-testid=editor-replay-basis]").Text(); !strings.Contains(basis, `binding "`+f.name+`"`) {
		t.Errorf("basis %q", basis)
	}
	job, ok := back.Find("[data-testid=replay-job]").Attr("data-job-url")
	if !ok {
		t.Fatalf("no replay started: %s", back.Find("[data-testid=editor-replay-outcome]").Text())
	}
	var outcome *goquery.Document
	waitFor(t, "the replay to end", 60*time.Second, func() bool {
		_, outcome = ts.request(t, sess, http.MethodGet, job, nil, true)
		return outcome.Find("[data-testid=replay-job]").Length() == 0
	})
	if got := outcome.Find("[data-testid=replay-newly-denied]").Text(); got != "1" {
		t.Fatalf("newly denied %q, want 1: %s", got, outcome.Text())
	}

	// Nothing was applied by the replay; the form that came back applies.
	pol, err := f.admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(context.Background(), f.name, metav1.GetOptions{})
	if err != nil || pol.Spec.Validations[0].Expression != "object.metadata.name != ''" {
		t.Fatalf("after the replay the policy is %v (%v), want it unchanged", pol.Spec.Validations, err)
	}
	after := editorFormOf(back)
	if after.Get("resourceVersion") != form.Get("resourceVersion") || after.Get("base") != form.Get("base") {
		t.Fatalf("the form lost its starting version: %q → %q", form.Get("resourceVersion"), after.Get("resourceVersion"))
	}
	if rec := ts.post(t, sess, urls.EditorOf(urls.Object(kube.AdmissionPolicies, f.name)).Apply, after); rec.Code != http.StatusSeeOther {
		t.Fatalf("Apply after the replay: status %d: %.400s", rec.Code, rec.Body.String())
	}
	pol, err = f.admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(context.Background(), f.name, metav1.GetOptions{})
	if err != nil || !strings.Contains(pol.Spec.Validations[0].Expression, "'team' in") {
		t.Fatalf("after Apply the policy is %v (%v)", pol.Spec.Validations, err)
	}
}

// editorFormOf is the editor form's fields as the browser would send them.
func editorFormOf(doc *goquery.Document) url.Values {
	form := url.Values{"yaml": {doc.Find("[data-testid=editor-yaml]").Text()}}
	doc.Find("[data-testid=editor-form] input[type=hidden]").Each(func(_ int, in *goquery.Selection) {
		if name, _ := in.Attr("name"); name != "_csrf" {
			form.Set(name, in.AttrOr("value", ""))
		}
	})
	doc.Find("[data-testid=editor-form] input[type=radio][checked]").Each(func(_ int, in *goquery.Selection) {
		form.Set(in.AttrOr("name", ""), in.AttrOr("value", ""))
	})
	return form
}

// withEditorAs gives the console the editor's reads and writes as identity.
func withEditorAs(t *testing.T, identity string) consoleOption {
	t.Helper()
	ed, err := kube.NewEditor(testcluster.RestConfig(t, identity))
	if err != nil {
		t.Fatal(err)
	}
	return func(d *Deps) { d.Editor = ed }
}
