//go:build integration

package handlers

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// applyAs server-side applies body (JSON) to the CSIDriver name as field
// manager manager, the way kubectl apply --server-side does.
func applyAs(t *testing.T, manager, name, body string) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	_, err = dyn.Resource(schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers"}).
		Patch(context.Background(), name, types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: manager})
	if err != nil {
		t.Fatal(err)
	}
}

// managerOf is the field manager that owns metadata.labels[key] of obj, or "".
func managersOf(obj *unstructured.Unstructured, key string) []string {
	var out []string
	for _, mf := range obj.GetManagedFields() {
		if mf.FieldsV1 != nil && bytes.Contains(mf.FieldsV1.Raw, []byte(`"f:`+key+`"`)) {
			out = append(out, mf.Manager)
		}
	}
	return out
}

func ssaForm(ed editor, text string, extra ...string) url.Values {
	f := ed.form(text)
	f.Set("write", "apply")
	for i := 0; i+1 < len(extra); i += 2 {
		f.Set(extra[i], extra[i+1])
	}
	return f
}

// TestServerSideApplyConflictThenForce: a label that field manager "other"
// set is changed in the editor in server-side apply mode. Preview and Apply
// report the conflict with the manager and the field and write nothing;
// force without the confirmation is refused locally; confirmed force
// previews, then applies, and clusterdesk owns the field afterwards.
func TestServerSideApplyConflictThenForce(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	name := uniq("edit-ssa") + ".clusterdesk.test"
	es.create(t, kube.CSIDrivers, csiDriverYAML(name))
	applyAs(t, "other", name, `{"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver","metadata":{"name":"`+name+`","labels":{"team":"other"}}}`)
	path := "/csidrivers/" + name

	code, page, _ := es.get(t, es.sess, path+"/edit")
	if code != http.StatusOK || page.Find(`[data-testid="editor-write-apply"]`).Length() != 1 ||
		!strings.Contains(page.Find(`[data-testid="editor-write-help"]`).Text(), "server-side apply merges only the fields in your text") {
		t.Fatalf("the editor offers no server-side apply (status %d)", code)
	}
	ed := editorOf(page)
	mine := strings.Replace(ed.text, "team: other", "team: mine", 1)
	if mine == ed.text {
		t.Fatalf("no label in the editor text:\n%s", ed.text)
	}
	unchanged := func(step string) {
		t.Helper()
		live := es.live(t, kube.CSIDrivers, name)
		if live.GetResourceVersion() != ed.rv || live.GetLabels()["team"] != "other" {
			t.Fatalf("%s changed the object: rv %s → %s, label %q", step, ed.rv, live.GetResourceVersion(), live.GetLabels()["team"])
		}
	}

	for _, op := range []string{"preview", "apply"} {
		code, doc, _ := es.submit(t, path+"/"+op, ssaForm(ed, mine))
		managers := doc.Find(`[data-testid="apply-conflict-manager"]`)
		manager, _ := managers.First().Attr("data-manager")
		fields := strings.Join(strings.Fields(doc.Find(`[data-testid="apply-conflict-field"]`).Text()), " ")
		t.Logf("%s: %d, manager %q, fields %q", op, code, manager, fields)
		if code != http.StatusConflict || managers.Length() != 1 || manager != "other" || !strings.Contains(fields, ".metadata.labels.team") {
			t.Errorf("%s: status %d, %d managers (%q), fields %q; want 409 naming \"other\" and .metadata.labels.team", op, code, managers.Length(), manager, fields)
		}
		if doc.Find(`[data-testid="apply-force"]`).Length() != 1 || doc.Find(`[data-testid="apply-force-confirm"]`).Length() != 1 {
			t.Errorf("%s: no force button with its confirmation", op)
		}
		if got := doc.Find(`textarea[name="yaml"]`).Text(); got != mine {
			t.Errorf("%s: the user's text was not kept", op)
		}
		if _, checked := doc.Find(`[data-testid="editor-write-apply"]`).Attr("checked"); !checked {
			t.Errorf("%s: the page forgot the server-side apply mode", op)
		}
		unchanged(op)
	}

	code, doc, _ := es.submit(t, path+"/apply", ssaForm(ed, mine, "force", "1"))
	if title, _, _ := problem(doc); code != http.StatusUnprocessableEntity || title != "Force not confirmed" {
		t.Errorf("force without confirmation: status %d, %q", code, title)
	}
	unchanged("force without confirmation")

	code, doc, _ = es.submit(t, path+"/preview", ssaForm(ed, mine, "force", "1", "forceConfirm", "1"))
	added := doc.Find(`[data-testid="preview-diff"] [data-testid="diff-line"][data-kind="added"]`).Text()
	if code != http.StatusOK || !strings.Contains(added, "team: mine") {
		title, msg, _ := problem(doc)
		t.Fatalf("forced preview: status %d, added %q (%s: %s)", code, added, title, msg)
	}
	unchanged("forced preview")

	code, _, hdr := es.submit(t, path+"/apply", ssaForm(ed, mine, "force", "1", "forceConfirm", "1"))
	if code != http.StatusSeeOther || hdr.Get("Location") != path {
		t.Fatalf("forced apply: status %d, Location %q", code, hdr.Get("Location"))
	}
	live := es.live(t, kube.CSIDrivers, name)
	if live.GetLabels()["team"] != "mine" {
		t.Fatalf("after forced apply: labels %v", live.GetLabels())
	}
	if owners := managersOf(live, "team"); len(owners) != 1 || owners[0] != kube.FieldManager {
		t.Errorf("metadata.labels.team is owned by %v; want only %s", owners, kube.FieldManager)
	}
	if !strings.Contains(es.log.String(), "verb=apply-force kind=CSIDriver name="+name) {
		t.Errorf("the audit log lacks the forced apply:\n%s", es.log.String())
	}
}

// TestServerSideApplyMergesAndPreviews: in server-side apply mode a change
// made on the server after the editor opened is no conflict when the text
// leaves that field alone (the update mode would refuse it); the dry-run
// preview shows the user's change and writes nothing; Apply keeps both.
func TestServerSideApplyMergesAndPreviews(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	name := uniq("edit-ssa-merge") + ".clusterdesk.test"
	es.create(t, kube.CSIDrivers, csiDriverYAML(name))
	path := "/csidrivers/" + name
	ed := es.openEditor(t, path+"/edit")
	mine := strings.Replace(ed.text, "  name: "+name+"\n", "  labels:\n    mode: ssa\n  name: "+name+"\n", 1)

	// Behind the editor's back, manager "other" adds an annotation.
	applyAs(t, "other", name, `{"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver","metadata":{"name":"`+name+`","annotations":{"owner":"other"}}}`)
	between := es.live(t, kube.CSIDrivers, name).GetResourceVersion()

	code, doc, _ := es.submit(t, path+"/preview", ssaForm(ed, mine))
	added := doc.Find(`[data-testid="preview-diff"] [data-testid="diff-line"][data-kind="added"]`).Text()
	if code != http.StatusOK || !strings.Contains(added, "mode: ssa") {
		title, msg, _ := problem(doc)
		t.Fatalf("SSA preview: status %d, added %q (%s: %s)", code, added, title, msg)
	}
	if live := es.live(t, kube.CSIDrivers, name); live.GetResourceVersion() != between || live.GetLabels()["mode"] != "" {
		t.Fatal("the SSA preview changed the object")
	}
	// The record's starting version is the server's (server-side apply sends
	// none, so the form's would be the browser's word), not the editor's.
	if !strings.Contains(es.log.String(), "verb=apply kind=CSIDriver name="+name+" rvBefore="+between) ||
		!strings.Contains(es.log.String(), "dryRun=true") {
		t.Errorf("the audit log lacks the SSA dry run:\n%s", es.log.String())
	}

	// The update mode refuses the same text: the object changed since.
	if code, _, _ := es.submit(t, path+"/apply", ed.form(mine)); code != http.StatusConflict {
		t.Errorf("update mode after a change behind its back: status %d, want 409", code)
	}
	code, _, _ = es.submit(t, path+"/apply", ssaForm(ed, mine))
	if code != http.StatusSeeOther {
		t.Fatalf("SSA apply: status %d", code)
	}
	live := es.live(t, kube.CSIDrivers, name)
	if live.GetLabels()["mode"] != "ssa" || live.GetAnnotations()["owner"] != "other" {
		t.Errorf("after SSA apply: labels %v, annotations %v; want both changes kept", live.GetLabels(), live.GetAnnotations())
	}
}

// postMultipart posts form as multipart/form-data, as the editor page's form does.
func (es *editServer) postMultipart(t *testing.T, path string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, vs := range form {
		for _, v := range vs {
			if err := mw.WriteField(k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, path, &buf)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.Header.Set("X-CSRF-Token", pageCSRFToken(t, es.e, withCookie(es.sess)))
	r.AddCookie(es.sess)
	return es.do(r)
}
