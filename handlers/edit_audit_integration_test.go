//go:build integration

package handlers

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/flowschemaform/form"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// editorState is what the editor page of an object holds in its form.
func (ac *auditConsole) editorState(t *testing.T, sess *http.Cookie, path string) (text, rv string) {
	t.Helper()
	code, doc, _ := ac.get(t, sess, path+"/edit")
	text = doc.Find(`textarea[name="yaml"]`).Text()
	rv, _ = doc.Find(`input[name="resourceVersion"]`).Attr("value")
	if code != http.StatusOK || text == "" || rv == "" {
		t.Fatalf("editor of %s: status %d, rv %q", path, code, rv)
	}
	return text, rv
}

// newCSIDriver creates a CSIDriver as admin (deleted when the test ends) and
// waits until the console's cache holds it.
func (ac *auditConsole) newCSIDriver(t *testing.T, prefix, manager string) (string, *storagev1.CSIDriver) {
	t.Helper()
	name := uniq(prefix) + ".clusterdesk.test"
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	attach := false
	d, err := cs.StorageV1().CSIDrivers().Create(context.Background(), &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1.CSIDriverSpec{AttachRequired: &attach}}, metav1.CreateOptions{FieldManager: manager})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.StorageV1().CSIDrivers().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	waitFor(t, "the cache to see "+name, 10*time.Second, func() bool { _, err := ac.cache.CSIDriver(name); return err == nil })
	return name, d
}

// TestAuditBeforeIgnoresForgedBase is the attack of issue 14.6: the person
// being audited sends, as the base, the very text they apply, so that the
// browser's diff is empty. The audit lines must still show the change, for an
// update and for a server-side apply (which also sends a forged
// resourceVersion: it carries none to the API server, so the record must not
// take it from the form either).
func TestAuditBeforeIgnoresForgedBase(t *testing.T) {
	ac := newAuditConsole(t, testcluster.Admin, false)
	sess := ac.login(t)
	name, _ := ac.newCSIDriver(t, "forged-base", "it-forged-base")
	path := "/csidrivers/" + name
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))

	for _, mode := range []string{"update", "apply"} {
		text, rv := ac.editorState(t, sess, path)
		mine := strings.Replace(text, "metadata:\n", "metadata:\n  labels:\n    hidden-"+mode+": \"yes\"\n", 1)
		if strings.Contains(text, "\n  labels:\n") {
			mine = strings.Replace(text, "\n  labels:\n", "\n  labels:\n    hidden-"+mode+": \"yes\"\n", 1)
		}
		sentRV := rv
		if mode == "apply" {
			sentRV = "1" // server-side apply sends no resourceVersion: the form's is only the browser's word
		}
		form := url.Values{"yaml": {mine}, "resourceVersion": {sentRV}, "base": {edit.EncodeBase(mine)}, "write": {mode}}
		rec := ac.post(t, sess, path+"/preview", form)
		doc, _ := goquery.NewDocumentFromReader(rec.Body)
		// The forged base drives only what the user is shown: their own diff
		// does not show the label.
		if added := doc.Find(`[data-testid="preview-diff"] [data-kind="added"]`).Text(); rec.Code != http.StatusOK || strings.Contains(added, "hidden-") {
			title, msg, causes := problem(doc)
			t.Fatalf("%s preview: status %d (%s: %s %s); the forged base should hide the label from the user's own diff: %q", mode, rec.Code, title, msg, causes, added)
		}
		if rec := ac.post(t, sess, path+"/apply", form); rec.Code != http.StatusSeeOther {
			t.Fatalf("%s apply: status %d: %.300s", mode, rec.Code, rec.Body.String())
		}
		live, err := cs.StorageV1().CSIDrivers().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || live.Labels["hidden-"+mode] != "yes" {
			t.Fatalf("%s did not write the label: %v %v", mode, live.Labels, err)
		}
		waitFor(t, "the cache to see the "+mode, 10*time.Second, func() bool {
			d, err := ac.cache.CSIDriver(name)
			return err == nil && d.ResourceVersion == live.ResourceVersion
		})
		var recs []audit.Record
		for _, r := range ac.records(t, name) {
			if r.Verb == mode {
				recs = append(recs, r)
			}
		}
		// Preview: one dry run; apply: its dry run and the write.
		if len(recs) != 3 {
			t.Fatalf("%d %s records, want 3", len(recs), mode)
		}
		for i, r := range recs {
			if r.Result != audit.ResultOK || !strings.Contains(r.Diff, "+    hidden-"+mode+": \"yes\"") {
				t.Errorf("%s record %d (dryRun %v, result %s) hides the change; diff:\n%s", mode, i, r.DryRun, r.Result, r.Diff)
			}
			if r.RVBefore != rv {
				t.Errorf("%s record %d: resourceVersionBefore %q, want the server's %q", mode, i, r.RVBefore, rv)
			}
		}
		if last := recs[2]; last.DryRun || last.RVAfter != live.ResourceVersion {
			t.Errorf("%s: the last record is not the write: %+v", mode, last)
		}
	}
}

// gzipBomb is a base field that expands to size bytes of zeros.
func gzipBomb(t *testing.T, size int) string {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	chunk := make([]byte, 1<<20)
	for n := 0; n < size; n += len(chunk) {
		if _, err := zw.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

// TestEditorRefusesABaseBomb: a 90 KB base that expands to 64 MiB is refused
// with a 413 that says why, before anything is sent to the API server (no dry
// run, no audit record), and without expanding it (allocations measured).
func TestEditorRefusesABaseBomb(t *testing.T) {
	ac := newAuditConsole(t, testcluster.Admin, false)
	sess := ac.login(t)
	name, _ := ac.newCSIDriver(t, "base-bomb", "it-base-bomb")
	path := "/csidrivers/" + name
	text, rv := ac.editorState(t, sess, path)
	bomb := gzipBomb(t, 64<<20)
	for _, op := range []string{"/preview", "/apply", "/rebase"} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rec := ac.post(t, sess, path+op, url.Values{"yaml": {text}, "resourceVersion": {rv}, "base": {bomb}})
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s with a %d-byte base expanding to 64 MiB: status %d, %d MiB allocated in the process meanwhile", op, len(bomb), rec.Code, alloc>>20)
		if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "expands to more than 6MiB") {
			t.Errorf("%s: status %d, want 413 saying the base expands to more than 6MiB: %.300s", op, rec.Code, rec.Body.String())
		}
		if alloc > 48<<20 {
			t.Errorf("%s: %d MiB allocated: the bomb was expanded", op, alloc>>20)
		}
	}
	if recs := ac.records(t, name); len(recs) != 0 {
		t.Fatalf("a refused form reached the API server: %d audit records, first %+v", len(recs), recs[0])
	}
}

// bigCRD is a CRD whose YAML has about 3 lines per property.
func bigCRD(group string, properties int) *apiextensionsv1.CustomResourceDefinition {
	props := map[string]apiextensionsv1.JSONSchemaProps{}
	for i := range properties {
		props[fmt.Sprintf("field%05d", i)] = apiextensionsv1.JSONSchemaProps{Type: "string", Description: fmt.Sprintf("Field number %d.", i)}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "bigs." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "bigs", Singular: "big", Kind: "Big", ListKind: "BigList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", Properties: props}}}}}},
		},
	}
}

// TestHugeDiffIsRefusedNotComputed: a forged base of 8,000 unrelated lines
// against a CRD of more than 8,000 lines (64 million line pairs) makes the
// preview say "too large to diff" and the rebase refuse, instead of diffing;
// a one-line change to the same CRD from its real base still shows its diff.
func TestHugeDiffIsRefusedNotComputed(t *testing.T) {
	ac := newAuditConsole(t, testcluster.Admin, false)
	sess := ac.login(t)
	crd := bigCRD(uniq("g")+".clusterdesk.test", 3000)
	installCRD(t, crd)
	waitFor(t, "the cache to see the CRD", 20*time.Second, func() bool { _, err := ac.cache.CRD(crd.Name); return err == nil })
	path := "/crds/" + crd.Name
	_, doc, _ := ac.get(t, sess, path+"/edit")
	text := doc.Find(`textarea[name="yaml"]`).Text()
	rv, _ := doc.Find(`input[name="resourceVersion"]`).Attr("value")
	base, _ := doc.Find(`input[name="base"]`).Attr("value")
	lines := strings.Count(text, "\n")
	if lines < 8000 {
		t.Fatalf("the CRD's text has %d lines, want more than 8,000", lines)
	}
	var junk strings.Builder
	for i := range 8000 {
		fmt.Fprintf(&junk, "junk%d: %d\n", i, i)
	}
	mine := strings.Replace(text, "\nmetadata:\n", "\nmetadata:\n  annotations:\n    clusterdesk.test/huge: \"yes\"\n", 1)

	start := time.Now()
	rec := ac.post(t, sess, path+"/preview", url.Values{"yaml": {mine}, "resourceVersion": {rv}, "base": {edit.EncodeBase(junk.String())}})
	doc, _ = goquery.NewDocumentFromReader(rec.Body)
	note := doc.Find(`[data-testid="preview-diff-note"]`).Text()
	t.Logf("preview with a forged 8,000-line base against %d lines: status %d in %v, %d diff lines", lines, rec.Code, time.Since(start),
		doc.Find(`[data-testid="preview-diff"] [data-testid="diff-line"]`).Length())
	if rec.Code != http.StatusOK || !strings.Contains(note, "Too large to diff: 8000 × ") {
		t.Errorf("preview: status %d, note %q; want a too-large note", rec.Code, note)
	}

	rec = ac.post(t, sess, path+"/rebase", url.Values{"yaml": {mine}, "resourceVersion": {rv}, "base": {edit.EncodeBase(junk.String())}})
	doc, _ = goquery.NewDocumentFromReader(rec.Body)
	title, msg, _ := problem(doc)
	if rec.Code != http.StatusUnprocessableEntity || title != "Too large to rebase" || !strings.Contains(msg, "too large to diff: 8000 × ") {
		t.Errorf("rebase: status %d, %q: %q", rec.Code, title, msg)
	}

	// The same CRD with its real base: only the changed lines count.
	rec = ac.post(t, sess, path+"/preview", url.Values{"yaml": {mine}, "resourceVersion": {rv}, "base": {base}})
	doc, _ = goquery.NewDocumentFromReader(rec.Body)
	if added := doc.Find(`[data-testid="preview-diff"] [data-kind="added"]`).Text(); rec.Code != http.StatusOK || !strings.Contains(added, "clusterdesk.test/huge") {
		t.Errorf("preview of a one-line change: status %d, added %q, note %q", rec.Code, added, doc.Find(`[data-testid="preview-diff-note"]`).Text())
	}
}

// TestDeletePageGETRecordsNothing: opening a delete page (which dry-runs the
// deletion to show its consequences) is not an action: no audit line, no
// Event. Only the POST records its dry run and its deletion. Both kinds of
// pages: a console kind and a custom resource.
func TestDeletePageGETRecordsNothing(t *testing.T) {
	ac := newAuditConsole(t, testcluster.Admin, false)
	sess := ac.login(t)
	driver, d := ac.newCSIDriver(t, "delete-get", "it-delete-get")

	group := uniq("g") + ".clusterdesk.test"
	crd := gadgetCRD("gadgets", group)
	installCRD(t, crd)
	waitFor(t, "the cache to see the CRD", 20*time.Second, func() bool { _, err := ac.cache.CRD(crd.Name); return err == nil })
	dyn, err := dynamic.NewForConfig(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	gadget := uniq("gadget")
	cr, err := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}).Namespace("default").Create(context.Background(),
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Gadget", "metadata": map[string]any{"name": gadget}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	for _, o := range []struct{ name, page, uid string }{
		{driver, "/csidrivers/" + driver, string(d.UID)},
		{gadget, "/crds/" + crd.Name + "/instances/default/" + gadget, string(cr.GetUID())},
	} {
		for range 2 {
			code, doc, _ := ac.get(t, sess, o.page+"/delete")
			if code != http.StatusOK || doc.Find(`input[name="uid"]`).Length() == 0 {
				t.Fatalf("GET %s/delete: status %d, or the dry run failed", o.page, code)
			}
		}
		if recs := ac.records(t, o.name); len(recs) != 0 {
			t.Errorf("GET %s/delete wrote %d audit lines, first %+v", o.page, len(recs), recs[0])
		}
		if rec := ac.post(t, sess, o.page+"/delete", url.Values{"confirm": {o.name}, "uid": {o.uid}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("POST %s/delete: status %d", o.page, rec.Code)
		}
		var got []string
		for _, r := range ac.records(t, o.name) {
			got = append(got, fmt.Sprintf("%s dry=%v %s", r.Verb, r.DryRun, r.Result))
		}
		if want := "[delete dry=true ok delete dry=false ok]"; fmt.Sprint(got) != want {
			t.Errorf("%s: records %v, want %s", o.page, got, want)
		}
		// The deletion's "before" is the API server's object. A custom
		// resource's record names it (its UID) without its body, as the API
		// server's audit policy keeps custom resources (edit_audit.go).
		for _, r := range ac.records(t, o.name) {
			if r.UID != o.uid || strings.Contains(r.Diff, "-  name: "+o.name) != (o.name == driver) {
				t.Errorf("%s: record's UID or diff: %+v", o.page, r)
			}
		}
		// Events are written in order: once the deletion's own Event is there,
		// any Event of the page views would be there too.
		var evs []string
		waitFor(t, "the deletion's Event", 20*time.Second, func() bool {
			evs = eventsAbout(t, o.name, 1)
			return strings.Contains(strings.Join(evs, "\n"), "admin deleted ")
		})
		if len(evs) != 2 {
			t.Errorf("%s: %d Events, want 2 (the POST's dry run and deletion): %q", o.page, len(evs), evs)
		}
	}
}

// TestObservedCSVNeutralisesFormulaCells: a field manager is any string a
// client chooses; one whose first non-blank character starts a formula is
// exported with a leading apostrophe, so a spreadsheet shows it as text.
// (Was the activity view's export; now the ledger's of observed versions.)
func TestObservedCSVNeutralisesFormulaCells(t *testing.T) {
	ac := newAuditConsole(t, testcluster.Auditor, true)
	sess := ac.login(t)
	const manager = " =cmd|' /C calc'!A0"
	name, _ := ac.newCSIDriver(t, "csv-formula", manager)
	waitFor(t, "the ledger to hold the creation", 10*time.Second, func() bool {
		for _, e := range ac.history(t, kube.CSIDrivers, name) {
			if e.Action == ledger.ActionCreate {
				return true
			}
		}
		return false
	})
	body := ac.getRaw(t, sess, "/ledger.csv?kind=csidrivers&source=watch")
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v", err)
	}
	found := false
	for _, r := range rows {
		if len(r) < 13 || r[12] != name {
			continue
		}
		found = true
		for i, cell := range r {
			if strings.Contains(cell, "=cmd") && !strings.HasPrefix(cell, "'") {
				t.Errorf("column %s is a live formula: %q", rows[0][i], cell)
			}
		}
	}
	if !found || !strings.Contains(body, "'"+manager) {
		t.Fatalf("no row for %s by its manager in the export:\n%.2000s", name, body)
	}
}

// TestFlowSchemaFormAuditIgnoresForgedBase: the FlowSchema form carries a
// base too (for its preview and conflict diffs); a forged one must not hide
// the change from the audit line either.
func TestFlowSchemaFormAuditIgnoresForgedBase(t *testing.T) {
	ac := newAuditConsole(t, testcluster.Admin, false)
	sess := ac.login(t)
	name := uniq("forged-fs")
	fs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin)).FlowcontrolV1().FlowSchemas()
	t.Cleanup(func() { _ = fs.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if rec := ac.post(t, sess, urls.FlowSchemaFormNew, withOp(form.Values(fsForm(name)), "save")); rec.Code != http.StatusSeeOther {
		t.Fatalf("create: status %d", rec.Code)
	}
	// The API server writes the new FlowSchema's status once; wait for it, so
	// that the edit below starts from the settled version.
	waitFor(t, "the status of "+name, 20*time.Second, func() bool {
		got, err := fs.Get(context.Background(), name, metav1.GetOptions{})
		return err == nil && len(got.Status.Conditions) > 0
	})
	code, doc, _ := ac.get(t, sess, urls.FlowSchemaForm(name))
	if code != http.StatusOK {
		t.Fatalf("form: status %d", code)
	}
	v := browserValues(doc.Find(`form[data-testid="fsform"]`))
	if v.Get("precedence") != "4321" || v.Get("base") == "" {
		t.Fatalf("form values: precedence %q, base %d bytes", v.Get("precedence"), len(v.Get("base")))
	}
	real, err := edit.DecodeBase(v.Get("base"))
	if err != nil {
		t.Fatal(err)
	}
	// The browser claims it started from what it is about to store.
	v.Set("base", edit.EncodeBase(strings.Replace(real, "matchingPrecedence: 4321", "matchingPrecedence: 4322", 1)))
	v.Set("precedence", "4322")
	if rec := ac.post(t, sess, urls.FlowSchemaForm(name), withOp(v, "save")); rec.Code != http.StatusSeeOther {
		t.Fatalf("save: status %d: %.300s", rec.Code, rec.Body.String())
	}
	var saved *audit.Record
	for _, r := range ac.records(t, name) {
		if r.Verb == "update" && !r.DryRun {
			saved = &r
		}
	}
	if saved == nil || saved.Result != audit.ResultOK || !strings.Contains(saved.Diff, "-  matchingPrecedence: 4321\n+  matchingPrecedence: 4322") {
		t.Fatalf("the update's audit line hides the change: %+v", saved)
	}
}
