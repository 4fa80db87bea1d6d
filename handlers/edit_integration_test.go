//go:build integration

package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// syncBuffer collects log lines from concurrent handlers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// editServer is the console on the devcluster as one identity, with the editor
// wired, a signed-in session, its log, and an admin editor for setting up and
// checking objects behind the console's back.
type editServer struct {
	*liveServer
	sess  *http.Cookie
	log   *syncBuffer
	admin *kube.Editor
}

func newEditServer(t *testing.T, identity string) *editServer {
	t.Helper()
	cfg := testcluster.RestConfig(t, identity)
	editor, err := kube.NewEditor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := kube.NewEditor(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	openAPI, err := kube.NewOpenAPI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	buf := &syncBuffer{}
	ls := newLiveServer(t, identity, false, func(d *Deps) {
		d.Log, d.Editor, d.Docs, d.Lookup = slog.New(slog.NewTextHandler(buf, nil)), editor, edit.NewDocs(openAPI, present.DocTree), nil
	})
	es := &editServer{liveServer: ls, log: buf, admin: admin}
	es.sess = ls.login(t)
	return es
}

func (es *editServer) kind(t *testing.T, id kube.KindID) kube.Kind {
	t.Helper()
	k, ok := es.cache.Kind(id)
	if !ok || k.Version == "" {
		t.Fatalf("kind %s not discovered", id)
	}
	return k
}

// create makes an object as admin from YAML and deletes it when the test ends.
func (es *editServer) create(t *testing.T, id kube.KindID, text string) *unstructured.Unstructured {
	t.Helper()
	k := es.kind(t, id)
	obj, err := edit.Parse(text, edit.Target{APIVersion: page.APIVersion(k), Kind: k.Singular})
	if err != nil {
		t.Fatal(err)
	}
	res, err := es.admin.Create(context.Background(), k, obj, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = es.admin.Delete(context.Background(), k, obj.GetName(), "", false, "") })
	return res.Object
}

func (es *editServer) live(t *testing.T, id kube.KindID, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := es.admin.Get(context.Background(), es.kind(t, id), name)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// editor is an editor page as the browser would post it back.
type editor struct {
	text, rv, base string
}

func (es *editServer) openEditor(t *testing.T, path string) editor {
	t.Helper()
	code, doc, _ := es.get(t, es.sess, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", path, code, doc.Find("main").Text())
	}
	return editorOf(doc)
}

func editorOf(doc *goquery.Document) editor {
	form := doc.Find(`[data-testid="editor-form"]`)
	rv, _ := form.Find(`input[name="resourceVersion"]`).Attr("value")
	base, _ := form.Find(`input[name="base"]`).Attr("value")
	return editor{text: form.Find(`textarea[name="yaml"]`).Text(), rv: rv, base: base}
}

func (ed editor) form(text string) url.Values {
	return url.Values{"yaml": {text}, "resourceVersion": {ed.rv}, "base": {ed.base}}
}

func (es *editServer) submit(t *testing.T, path string, form url.Values) (int, *goquery.Document, http.Header) {
	t.Helper()
	rec := es.post(t, es.sess, path, form)
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, doc, rec.Header()
}

// problem is the first error shown beside the editor: title, message, causes.
func problem(doc *goquery.Document) (title, message, causes string) {
	p := doc.Find(`[data-testid="editor-problem"]`).First()
	return strings.TrimSpace(p.Find(`[data-testid="editor-problem-title"]`).Text()),
		strings.TrimSpace(p.Find(`[data-testid="editor-problem-message"]`).Text()),
		strings.Join(strings.Fields(p.Find(`[data-testid="editor-causes"]`).Text()), " ")
}

func uniq(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
}

func csiDriverYAML(name string) string {
	return "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata:\n  name: " + name + "\nspec:\n  attachRequired: false\n"
}

func TestEditPreviewThenApplyACSIDriver(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	name := uniq("edit-apply") + ".clusterdesk.test"
	created := es.create(t, kube.CSIDrivers, csiDriverYAML(name))
	path := "/csidrivers/" + name
	waitFor(t, "the cache to see the driver", 10*time.Second, func() bool { _, err := es.cache.CSIDriver(name); return err == nil })

	_, detail, _ := es.get(t, es.sess, path)
	if href, _ := detail.Find(`[data-testid="edit-link"]`).Attr("href"); href != path+"/edit" {
		t.Fatalf("detail page Edit link = %q", href)
	}
	ed := es.openEditor(t, path+"/edit")
	if ed.rv != created.GetResourceVersion() || !strings.Contains(ed.text, "name: "+name) ||
		strings.Contains(ed.text, "managedFields") || strings.Contains(ed.text, "resourceVersion") {
		t.Fatalf("editor: rv %q (live %q), text:\n%s", ed.rv, created.GetResourceVersion(), ed.text)
	}
	mine := strings.Replace(ed.text, "  name: "+name+"\n", "  labels:\n    team: storage\n  name: "+name+"\n", 1)

	start := time.Now()
	code, doc, _ := es.submit(t, path+"/preview", ed.form(mine))
	t.Logf("preview answered in %v", time.Since(start))
	if code != http.StatusOK {
		t.Fatalf("preview: status %d: %v", code, doc.Find(`[data-testid="editor-problem"]`).Text())
	}
	added := doc.Find(`[data-testid="preview-diff"] [data-testid="diff-line"][data-kind="added"]`).Text()
	if !strings.Contains(added, "team: storage") {
		t.Fatalf("preview diff does not add the label; added lines: %q", added)
	}
	if got := doc.Find(`textarea[name="yaml"]`).Text(); got != mine {
		t.Fatalf("preview lost the user's text")
	}
	if live := es.live(t, kube.CSIDrivers, name); live.GetResourceVersion() != ed.rv || live.GetLabels()["team"] != "" {
		t.Fatal("preview changed the object")
	}

	code, _, hdr := es.submit(t, path+"/apply", ed.form(mine))
	if code != http.StatusSeeOther || hdr.Get("Location") != path {
		t.Fatalf("apply: status %d, Location %q", code, hdr.Get("Location"))
	}
	live := es.live(t, kube.CSIDrivers, name)
	if live.GetLabels()["team"] != "storage" || live.GetResourceVersion() == ed.rv {
		t.Fatalf("after apply: labels %v, rv %s", live.GetLabels(), live.GetResourceVersion())
	}
	// The page the browser is sent to already shows the change, with the result.
	_, detail, _ = es.get(t, es.sess, path)
	if !strings.Contains(detail.Find(`[data-testid="yaml"]`).Text(), "team: storage") {
		t.Error("the detail page after Apply does not show the new label")
	}
	wantLog := fmt.Sprintf("verb=update kind=CSIDriver name=%s rvBefore=%s rvAfter=%s dryRun=false result=ok", name, ed.rv, live.GetResourceVersion())
	if !strings.Contains(es.log.String(), wantLog) || !strings.Contains(es.log.String(), "who=admin") {
		t.Errorf("audit log lacks %q:\n%s", wantLog, es.log.String())
	}
	if !strings.Contains(es.log.String(), "verb=update kind=CSIDriver name="+name+" rvBefore="+ed.rv+" rvAfter="+ed.rv+" dryRun=true result=ok") {
		t.Errorf("audit log lacks the dry run:\n%s", es.log.String())
	}
}

// TestEditErrorsNeverWrite sends each kind of bad edit to Preview and to Apply
// and checks the message shown and that the object did not change.
func TestEditErrorsNeverWrite(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	drv := uniq("edit-errors") + ".clusterdesk.test"
	es.create(t, kube.CSIDrivers, csiDriverYAML(drv))
	fsName := uniq("edit-errors-fs")
	// At the served version: v1, or v1beta3 on Kubernetes 1.28 (make test-compat).
	es.create(t, kube.FlowSchemas, "apiVersion: "+page.APIVersion(es.kind(t, kube.FlowSchemas))+`
kind: FlowSchema
metadata:
  name: `+fsName+`
spec:
  matchingPrecedence: 9000
  priorityLevelConfiguration:
    name: global-default
  rules:
  - subjects:
    - kind: User
      user:
        name: nobody-`+fsName+`
    nonResourceRules:
    - verbs: ["get"]
      nonResourceURLs: ["/nothing"]
`)
	csrName := testcluster.CreateCSR(t, testcluster.CSR{Signer: "kubernetes.io/kube-apiserver-client"})
	otherRequest, _, err := edit.Example("CertificateSigningRequest", "certificates.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	_, otherReq, _ := strings.Cut(otherRequest, "request: ")
	otherReq, _, _ = strings.Cut(otherReq, "\n")

	type change func(text string) string
	replace := func(old, new string) change {
		return func(text string) string {
			if !strings.Contains(text, old) {
				t.Fatalf("the editor text has no %q:\n%s", old, text)
			}
			return strings.Replace(text, old, new, 1)
		}
	}
	tests := []struct {
		name   string
		kind   kube.KindID
		object string
		change change
		status int
		title  string
		want   string // in the message or the causes
		line   bool   // the problem points at a line
		local  bool   // refused by clusterdesk before sending
	}{
		{"invalid YAML", kube.CSIDrivers, drv, replace("spec:\n", "spec: [\n"), 422, "Invalid YAML", "line", true, true},
		{"other kind", kube.CSIDrivers, drv, replace("kind: CSIDriver", "kind: StorageClass"), 422, "Wrong kind or apiVersion", `kind "StorageClass"`, true, true},
		{"other apiVersion", kube.CSIDrivers, drv, replace("apiVersion: storage.k8s.io/v1", "apiVersion: storage.k8s.io/v1beta1"), 422, "Wrong kind or apiVersion", "storage.k8s.io/v1beta1", true, true},
		{"name differs from the URL", kube.CSIDrivers, drv, replace("name: "+drv, "name: other-"+drv), 422, "Name differs from the page", "other-" + drv, true, true},
		{"unknown field", kube.CSIDrivers, drv, replace("spec:\n", "spec:\n  attachRequird: true\n"), 400, "Unknown field (strict field validation)", "spec.attachRequird", true, false},
		{"immutable CSIDriver attachRequired", kube.CSIDrivers, drv, replace("attachRequired: false", "attachRequired: true"), 422, "The API server refused the object", "field is immutable", true, false},
		// The CSR update strategy silently keeps the stored spec: clusterdesk
		// notices from the dry run that the change would be dropped.
		{"immutable CSR request", kube.CSRs, csrName, func(text string) string {
			_, after, _ := strings.Cut(text, "request: ")
			old, _, _ := strings.Cut(after, "\n")
			return strings.Replace(text, old, otherReq, 1)
		}, 422, "The API server would not store part of your change", "spec.request", true, false},
		{"matchingPrecedence 10001", kube.FlowSchemas, fsName, replace("matchingPrecedence: 9000", "matchingPrecedence: 10001"), 422, "The API server refused the object", "must not be greater than 10000", true, false},
		{"matchingPrecedence -1", kube.FlowSchemas, fsName, replace("matchingPrecedence: 9000", "matchingPrecedence: -1"), 422, "The API server refused the object", "must be a positive value", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "/" + string(tt.kind) + "/" + tt.object
			ed := es.openEditor(t, path+"/edit")
			before := es.live(t, tt.kind, tt.object)
			mine := tt.change(ed.text)
			for _, op := range []string{"preview", "apply"} {
				code, doc, _ := es.submit(t, path+"/"+op, ed.form(mine))
				title, msg, causes := problem(doc)
				t.Logf("%s: %d %s: %s [%s]", op, code, title, msg, causes)
				if code != tt.status || title != tt.title || !strings.Contains(msg+" "+causes, tt.want) {
					t.Errorf("%s: status %d, %q: %q [%s]; want %d, %q mentioning %q", op, code, title, msg, causes, tt.status, tt.title, tt.want)
				}
				if tt.line && doc.Find(`[data-testid="editor-problem"] [data-line]`).Length() == 0 {
					t.Errorf("%s: the problem names no line", op)
				}
				if got := doc.Find(`textarea[name="yaml"]`).Text(); got != mine {
					t.Errorf("%s: the user's text was not kept", op)
				}
				if local := doc.Find(`[data-testid="editor-problem-local"]`).Length() > 0; local != tt.local {
					t.Errorf("%s: local marker %v", op, local)
				}
			}
			after := es.live(t, tt.kind, tt.object)
			if after.GetResourceVersion() != before.GetResourceVersion() {
				t.Errorf("the object changed: version %s → %s", before.GetResourceVersion(), after.GetResourceVersion())
			}
		})
	}

	t.Run("matchingPrecedence 0 is defaulted, not refused", func(t *testing.T) {
		// matchingPrecedence is optional: the API server's defaulting turns 0
		// (the same as leaving it out) into 1000, which the preview shows.
		path := "/flowschemas/" + fsName
		ed := es.openEditor(t, path+"/edit")
		code, doc, _ := es.submit(t, path+"/preview", ed.form(strings.Replace(ed.text, "matchingPrecedence: 9000", "matchingPrecedence: 0", 1)))
		added := doc.Find(`[data-testid="preview-diff"] [data-testid="diff-line"][data-kind="added"]`).Text()
		if code != http.StatusOK || !strings.Contains(added, "matchingPrecedence: 1000") {
			t.Errorf("status %d, added lines %q; want the defaulted 1000", code, added)
		}
		if es.live(t, kube.FlowSchemas, fsName).GetResourceVersion() != ed.rv {
			t.Error("the preview changed the object")
		}
	})

	t.Run("body over the editor's 6 MiB", func(t *testing.T) {
		path := "/csidrivers/" + drv
		ed := es.openEditor(t, path+"/edit")
		huge := ed.text + "# " + strings.Repeat("x", editorBodyBytes) + "\n"
		for _, op := range []string{"preview", "apply"} {
			rec := es.postMultipart(t, path+"/"+op, ed.form(huge))
			body := rec.Body.String()
			if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than "+editorBody) ||
				!strings.Contains(body, "before anything reached the API server") {
				t.Errorf("%s: status %d, body %.300q", op, rec.Code, body)
			}
		}
		if es.live(t, kube.CSIDrivers, drv).GetResourceVersion() != ed.rv {
			t.Error("the object changed")
		}
		if strings.Contains(es.log.String(), "name="+drv+" rvBefore="+ed.rv+" rvAfter= dryRun=false") {
			t.Error("an oversized body reached the writer")
		}
	})
}

func TestEditWithoutPermission(t *testing.T) {
	admin := newEditServer(t, testcluster.Admin)
	name := uniq("edit-forbidden") + ".clusterdesk.test"
	admin.create(t, kube.CSIDrivers, csiDriverYAML(name))
	es := newEditServer(t, testcluster.Auditor)
	path := "/csidrivers/" + name
	ed := es.openEditor(t, path+"/edit") // the auditor may read it
	mine := strings.Replace(ed.text, "  name: "+name+"\n", "  labels:\n    audited: \"no\"\n  name: "+name+"\n", 1)
	for _, op := range []string{"preview", "apply"} {
		code, doc, _ := es.submit(t, path+"/"+op, ed.form(mine))
		title, msg, _ := problem(doc)
		if code != http.StatusForbidden || title != "Forbidden by the API server" || !strings.Contains(msg, `User "auditor" cannot update resource "csidrivers"`) {
			t.Errorf("%s: status %d, %q: %q", op, code, title, msg)
		}
	}
	if got := es.live(t, kube.CSIDrivers, name).GetResourceVersion(); got != ed.rv {
		t.Errorf("the object changed: %s → %s", ed.rv, got)
	}
	code, doc, _ := es.get(t, es.sess, path+"/delete")
	title, _, _ := problem(doc)
	if code != http.StatusOK || title != "Forbidden by the API server" || doc.Find(`[data-testid="delete-form"]`).Length() != 0 {
		t.Errorf("delete page for the auditor: status %d, problem %q, form shown %v", code, title, doc.Find(`[data-testid="delete-form"]`).Length() > 0)
	}
}

func TestEditConflictKeepsTextAndRebases(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	name := uniq("edit-conflict") + ".clusterdesk.test"
	es.create(t, kube.CSIDrivers, csiDriverYAML(name))
	path := "/csidrivers/" + name
	ed := es.openEditor(t, path+"/edit")
	mine := strings.Replace(ed.text, "requiresRepublish: false", "requiresRepublish: true", 1)

	// Someone else labels the driver meanwhile.
	k := es.kind(t, kube.CSIDrivers)
	theirs := es.live(t, kube.CSIDrivers, name)
	theirs.SetLabels(map[string]string{"changed-by": "someone-else"})
	if _, err := es.admin.Update(context.Background(), k, theirs, false); err != nil {
		t.Fatal(err)
	}

	code, doc, _ := es.submit(t, path+"/apply", ed.form(mine))
	if code != http.StatusConflict {
		t.Fatalf("apply over a newer version: status %d, want 409", code)
	}
	if got := doc.Find(`textarea[name="yaml"]`).Text(); got != mine {
		t.Fatalf("the conflict lost the user's text:\n%s", got)
	}
	if added := doc.Find(`[data-testid="conflict-diff"] [data-kind="added"]`).Text(); !strings.Contains(added, "changed-by: someone-else") {
		t.Fatalf("the conflict diff does not show the server's change: %q", added)
	}
	if doc.Find(`[data-testid="conflict-rebase"]`).Length() != 1 {
		t.Fatal("no rebase offered")
	}
	if live := es.live(t, kube.CSIDrivers, name); live.GetLabels()["changed-by"] != "someone-else" {
		t.Fatal("the other change was overwritten")
	}

	form := ed.form(mine)
	form.Set("mode", "merge")
	code, doc, _ = es.submit(t, path+"/rebase", form)
	rebased := editorOf(doc)
	if code != http.StatusOK || !strings.Contains(rebased.text, "changed-by: someone-else") || !strings.Contains(rebased.text, "requiresRepublish: true") ||
		rebased.rv == ed.rv {
		t.Fatalf("rebase: status %d, rv %s, text:\n%s", code, rebased.rv, rebased.text)
	}
	code, _, _ = es.submit(t, path+"/apply", rebased.form(rebased.text))
	if code != http.StatusSeeOther {
		t.Fatalf("apply after rebase: status %d", code)
	}
	live := es.live(t, kube.CSIDrivers, name)
	if r, _, _ := unstructured.NestedBool(live.Object, "spec", "requiresRepublish"); !r || live.GetLabels()["changed-by"] != "someone-else" {
		t.Fatalf("after the rebased apply: requiresRepublish %v, labels %v", r, live.GetLabels())
	}
}

func TestCreateThenDeleteAFlowSchema(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	ed := es.openEditor(t, "/flowschemas/new")
	name := uniq("edit-create")
	text := strings.Replace(ed.text, "name: example-flowschema", "name: "+name, 1)
	k := es.kind(t, kube.FlowSchemas)
	t.Cleanup(func() { _, _ = es.admin.Delete(context.Background(), k, name, "", false, "") })

	code, doc, _ := es.submit(t, "/flowschemas/create", url.Values{"yaml": {text}, "op": {"preview"}})
	if code != http.StatusOK || !strings.Contains(doc.Find(`[data-testid="preview-diff"]`).Text(), "name: "+name) {
		t.Fatalf("create preview: status %d %s", code, doc.Find(`[data-testid="editor-problem"]`).Text())
	}
	if _, err := es.admin.Get(context.Background(), k, name); !apierrors.IsNotFound(err) {
		t.Fatalf("a preview created the object: %v", err)
	}
	code, _, hdr := es.submit(t, "/flowschemas/create", url.Values{"yaml": {text}, "op": {"create"}})
	if code != http.StatusSeeOther || hdr.Get("Location") != "/flowschemas/"+name {
		t.Fatalf("create: status %d, Location %q", code, hdr.Get("Location"))
	}
	code, doc, _ = es.submit(t, "/flowschemas/create", url.Values{"yaml": {text}, "op": {"create"}})
	if title, _, _ := problem(doc); code != http.StatusConflict || title != "Already exists" {
		t.Errorf("second create: status %d, %q", code, title)
	}

	code, doc, _ = es.get(t, es.sess, "/flowschemas/"+name+"/delete")
	uid, _ := doc.Find(`input[name="uid"]`).Attr("value")
	if code != http.StatusOK || doc.Find(`[data-testid="delete-dryrun"]`).Length() != 1 || uid == "" {
		t.Fatalf("delete page: status %d, dry run shown %d", code, doc.Find(`[data-testid="delete-dryrun"]`).Length())
	}
	code, doc, _ = es.submit(t, "/flowschemas/"+name+"/delete", url.Values{"confirm": {"not-" + name}, "uid": {uid}})
	if title, _, _ := problem(doc); code != http.StatusUnprocessableEntity || title != "Name not confirmed" {
		t.Fatalf("mistyped confirmation: status %d, %q", code, title)
	}
	if _, err := es.admin.Get(context.Background(), k, name); err != nil {
		t.Fatalf("a mistyped confirmation deleted: %v", err)
	}
	code, _, hdr = es.submit(t, "/flowschemas/"+name+"/delete", url.Values{"confirm": {name}, "uid": {uid}})
	if code != http.StatusSeeOther || hdr.Get("Location") != "/flowschemas" {
		t.Fatalf("delete: status %d, Location %q", code, hdr.Get("Location"))
	}
	if _, err := es.admin.Get(context.Background(), k, name); !apierrors.IsNotFound(err) {
		t.Fatalf("after delete: %v", err)
	}
	log := es.log.String()
	for _, want := range []string{"verb=create kind=FlowSchema name=" + name, "verb=delete kind=FlowSchema name=" + name} {
		if !strings.Contains(log, want) {
			t.Errorf("audit log lacks %q", want)
		}
	}
}

func TestDeleteCRDCountsItsObjects(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	group := uniq("count") + ".clusterdesk.test"
	crd := es.create(t, kube.CRDs, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.`+group+`
spec:
  group: `+group+`
  scope: Namespaced
  names: {kind: Gizmo, plural: gizmos, singular: gizmo, listKind: GizmoList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`)
	waitFor(t, "the CRD to be established", 15*time.Second, func() bool {
		c, err := es.admin.CountCustomResources(context.Background(), crd)
		return err == nil && c.Count == 0
	})
	_, doc, _ := es.get(t, es.sess, "/crds/"+crd.GetName()+"/delete")
	if got := doc.Find(`[data-testid="delete-consequence"]`).First().Text(); !strings.Contains(got, "no Gizmo objects") {
		t.Fatalf("empty CRD: %q", got)
	}
	// Two objects in two namespaces.
	for i, ns := range []string{"default", "kube-system"} {
		createCR(t, group, ns, fmt.Sprintf("g%d", i))
	}
	_, doc, _ = es.get(t, es.sess, "/crds/"+crd.GetName()+"/delete")
	if got := doc.Find(`[data-testid="delete-consequence"]`).First().Text(); !strings.Contains(got, "all 2 Gizmo objects (gizmos."+group+")") {
		t.Fatalf("consequence = %q", got)
	}
}

func createCR(t *testing.T, group, ns, name string) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gizmos"}
	_, err = dyn.Resource(gvr).Namespace(ns).Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Gizmo", "metadata": map[string]any{"name": name}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPreviewOfALargeCRD previews an annotation change on the largest CRD
// (the real-world fixtures hold Argo's, 2.9 MB of YAML) through the editor's
// multipart form, which the editor routes' 6 MiB limit lets through, and logs
// how long the server took; the browser's share is measured in
// e2e/custom-resources.spec.ts.
func TestPreviewOfALargeCRD(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	crds, err := es.cache.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	// Largest first by their JSON size (cheap), then the first whose form
	// (the text, and again compressed) stays under the editor's limit.
	sizes := map[string]int{}
	for _, c := range crds {
		j, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		sizes[c.Name] = len(j)
	}
	slices.SortFunc(crds, func(a, b *apiextensionsv1.CustomResourceDefinition) int { return sizes[b.Name] - sizes[a.Name] })
	best, size := "", 0
	for _, c := range crds {
		obj, err := es.cache.Object(kube.CRDs, c.Name)
		if err != nil {
			t.Fatal(err)
		}
		u, err := runtimeToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		text, err := edit.Text(u, false)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(text) + len(edit.EncodeBase(text)); n < editorBodyBytes-64<<10 {
			best, size = c.Name, len(text)
			break
		}
	}
	if best == "" {
		t.Fatal("no CRD fits in a request")
	}
	path := "/crds/" + best
	ed := es.openEditor(t, path+"/edit")
	// Keys are sorted, so metadata's own annotations (if any) come first in it;
	// deeper "annotations:" lines in the schema must not be touched.
	mine := strings.Replace(ed.text, "\nmetadata:\n", "\nmetadata:\n  annotations:\n    clusterdesk.test/preview: measured\n", 1)
	if strings.Contains(ed.text, "\nmetadata:\n  annotations:\n") {
		mine = strings.Replace(ed.text, "\nmetadata:\n  annotations:\n", "\nmetadata:\n  annotations:\n    clusterdesk.test/preview: measured\n", 1)
	}
	start := time.Now()
	rec := es.postMultipart(t, path+"/preview", ed.form(mine))
	took := time.Since(start)
	code := rec.Code
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if code != http.StatusOK || !strings.Contains(doc.Find(`[data-testid="preview-diff"] [data-kind="added"]`).Text(), "clusterdesk.test/preview: measured") {
		title, msg, _ := problem(doc)
		t.Fatalf("preview of %s: status %d: %s: %s", best, code, title, msg)
	}
	t.Logf("preview of %s (%d KiB of YAML, %d lines): %v on the server", best, size>>10, strings.Count(ed.text, "\n"), took)
	obj, err := edit.Parse(mine, edit.Target{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: best})
	if err != nil {
		t.Fatal(err)
	}
	obj.SetResourceVersion(ed.rv)
	start = time.Now()
	if _, err := es.admin.Update(context.Background(), es.kind(t, kube.CRDs), obj, true); err != nil {
		t.Fatal(err)
	}
	t.Logf("of which the API server's dry run alone: %v", time.Since(start))
	if es.live(t, kube.CRDs, best).GetResourceVersion() != ed.rv {
		t.Error("the preview changed the CRD")
	}
}

func runtimeToUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	return &unstructured.Unstructured{Object: m}, err
}

func TestEditorShowsFieldDocs(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	for _, tt := range []struct{ path, field, want string }{
		{"/flowschemas/exempt/edit", "spec.matchingPrecedence", "must be ranged in [1,10000]"},
		{"/prioritylevels/exempt/edit", "spec.type", "Limited"},
		{"/csidrivers/new", "spec.attachRequired", "attach"},
		{"/crds/new", "spec.versions[].schema.openAPIV3Schema", "OpenAPI v3 schema"},
		{"/validatingwebhooks/new", "webhooks[].failurePolicy", "Ignore"},
		{"/csrs/new", "spec.signerName", "signer"},
	} {
		start := time.Now()
		code, doc, _ := es.get(t, es.sess, tt.path)
		took := time.Since(start)
		field := doc.Find(`[data-testid="editor-docs"] [data-testid="schema-field"][data-path="` + tt.field + `"]`)
		desc := field.Find(`[data-testid="schema-description"]`).First().Text()
		if code != http.StatusOK || !strings.Contains(desc, tt.want) {
			t.Errorf("%s: status %d, %s described as %q; want it to mention %q (note: %q)", tt.path, code, tt.field, desc, tt.want,
				doc.Find(`[data-testid="editor-docs-note"]`).Text())
		}
		t.Logf("%s: %d documented fields, first page view %v", tt.path, doc.Find(`[data-testid="editor-docs"] [data-testid="schema-field"]`).Length(), took)
	}
}
