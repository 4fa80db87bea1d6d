//go:build integration

package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// gadgetCRD is a namespaced CRD made for these tests: a printer column, a
// documented field, and a description written to attack the docs panel.
func gadgetCRD(plural, group string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.TrimSuffix(plural, "s"), Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
				},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"size":   {Type: "integer", Description: "How many sprockets the gadget turns. **Bold** text stays."},
							"colour": {Type: "string", Description: "Hostile: <img src=x onerror=alert(1)> <script>alert(2)</script> [link](javascript:alert(3))"},
						}},
					},
				}},
			}},
		},
	}
}

// installCRD creates crd as admin, waits until it is Established, and
// deletes it when the test ends.
func installCRD(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	j, err := json.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	if _, err := crds.Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.Name, metav1.DeleteOptions{}) })
	waitFor(t, crd.Name+" to be Established", 30*time.Second, func() bool {
		got, err := crds.Get(context.Background(), crd.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true
			}
		}
		return false
	})
	// Established is the CRD's status in etcd; the instance that serves this
	// test's requests answers for the new resource only once its own CRD
	// informer has seen that status (apiextensions-apiserver's crdHandler
	// answers 404 until then: pkg/apiserver/customresource_handler.go). A
	// create right after Established failed so in CI ("the server could not
	// find the requested resource"): wait until a list is served.
	cr := dyn.Resource(schema.GroupVersionResource{Group: crd.Spec.Group, Version: crd.Spec.Versions[0].Name, Resource: crd.Spec.Names.Plural})
	waitFor(t, crd.Name+" to be served", 30*time.Second, func() bool {
		_, err := cr.List(context.Background(), metav1.ListOptions{Limit: 1})
		return err == nil
	})
}

func TestCustomResourceInstancesAndEditor(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	group := fmt.Sprintf("g%d.clusterdesk.test", time.Now().UnixNano())
	crd := gadgetCRD("gadgets", group)
	installCRD(t, crd)
	waitFor(t, "the cache to see the CRD", 20*time.Second, func() bool { _, err := es.cache.CRD(crd.Name); return err == nil })
	dyn, err := dynamic.NewForConfig(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}
	for i := 1; i <= 3; i++ {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "Gadget",
			"metadata": map[string]any{"name": fmt.Sprintf("g%d", i)},
			"spec":     map[string]any{"size": int64(i * 10)},
		}}
		if _, err := dyn.Resource(gvr).Namespace("default").Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	list := "/crds/" + crd.Name + "/instances"

	t.Run("the CRD page counts them and links to them", func(t *testing.T) {
		code, doc, _ := es.get(t, es.sess, "/crds/"+crd.Name)
		panel := doc.Find(`[data-testid="crd-instances"]`)
		count := strings.TrimSpace(panel.Find(`[data-testid="field-count"] dd`).Text())
		href, _ := panel.Find(`[data-testid="field-list"] a`).Attr("href")
		if code != http.StatusOK || !strings.HasPrefix(count, "3") || href != list {
			t.Errorf("status %d, count %q, link %q", code, count, href)
		}
	})

	t.Run("the table has the printer columns and pages", func(t *testing.T) {
		code, doc, _ := es.get(t, es.sess, list+"?limit=2")
		var cols []string
		doc.Find(`[data-testid="instances-table"] th[scope="col"]:not(.tick-col)`).Each(func(_ int, s *goquery.Selection) { cols = append(cols, strings.TrimSpace(s.Text())) })
		if code != http.StatusOK || strings.Join(cols, ",") != "Name,Namespace,Size" {
			t.Fatalf("status %d, columns %v (%s)", code, cols, doc.Find(`[data-testid="instances-problem"]`).Text())
		}
		rows := doc.Find(`[data-testid="instances-table"] [data-testid="list-row"]`)
		first := cellsOf(rows.First())
		if rows.Length() != 2 || len(first) < 3 || first[0] != "g1" || first[1] != "default" || first[2] != "10" {
			t.Errorf("first page: %d rows, first %v", rows.Length(), first)
		}
		if href, _ := rows.First().Find("a").Attr("href"); href != list+"/default/g1" {
			t.Errorf("row link %q", href)
		}
		next, ok := doc.Find(`[data-testid="instances-next"]`).Attr("href")
		if !ok || !strings.Contains(next, "continue=") {
			t.Fatalf("no next page link (%q)", next)
		}
		code, doc, _ = es.get(t, es.sess, next)
		rows = doc.Find(`[data-testid="instances-table"] [data-testid="list-row"]`)
		if code != http.StatusOK || rows.Length() != 1 || cellsOf(rows)[0] != "g3" || doc.Find(`[data-testid="instances-next"]`).Length() != 0 {
			t.Errorf("second page: status %d, %d rows %q", code, rows.Length(), rows.Text())
		}
		if strings.TrimSpace(doc.Find(`[data-testid="instances-count"]`).Text()) != "3 in all" {
			t.Errorf("count %q", doc.Find(`[data-testid="instances-count"]`).Text())
		}
	})

	t.Run("an object's YAML, and its editor with the CRD's field docs", func(t *testing.T) {
		obj := list + "/default/g2"
		code, doc, _ := es.get(t, es.sess, obj)
		if code != http.StatusOK || !strings.Contains(doc.Find(`[data-testid="yaml"]`).Text(), "size: 20") {
			t.Fatalf("YAML view: status %d", code)
		}
		if href, _ := doc.Find(`[data-testid="edit-link"]`).Attr("href"); href != obj+"/edit" {
			t.Errorf("edit link %q", href)
		}
		// The API server publishes a new CRD's OpenAPI document a moment after it is established.
		var ed *goquery.Document
		waitFor(t, "the docs panel to describe spec.size", 30*time.Second, func() bool {
			_, ed, _ = es.get(t, es.sess, obj+"/edit")
			return strings.Contains(ed.Find(`[data-testid="editor-docs"] [data-path="spec.size"] [data-testid="schema-description"]`).Text(), "How many sprockets")
		})
		desc := ed.Find(`[data-testid="editor-docs"] [data-path="spec.size"] [data-testid="schema-description"]`)
		if desc.Find("strong").Text() != "Bold" {
			t.Errorf("the description's Markdown is not rendered: %q", desc.Text())
		}
		hostile := ed.Find(`[data-testid="editor-docs"] [data-path="spec.colour"] [data-testid="schema-description"]`)
		html, _ := hostile.Html()
		// Safe mode leaves raw HTML out and empties the javascript: link; the words stay.
		if !strings.Contains(hostile.Text(), "Hostile:") || !strings.Contains(hostile.Text(), "link") ||
			hostile.Find("img, script, [onerror]").Length() > 0 || strings.Contains(html, "javascript:") {
			t.Errorf("the hostile description came through as markup: %s", html)
		}
		if ed.Find(`[data-testid="editor-namespace"]`).Text() == "" {
			t.Error("the editor does not say the namespace")
		}

		e := editorOf(ed)
		mine := strings.Replace(e.text, "size: 20", "size: 25", 1)
		code, doc, _ = es.submit(t, obj+"/preview", e.form(mine))
		if code != http.StatusOK || !strings.Contains(doc.Find(`[data-testid="preview-diff"] [data-kind="added"]`).Text(), "size: 25") {
			title, msg, _ := problem(doc)
			t.Fatalf("preview: status %d (%s: %s)", code, title, msg)
		}
		code, _, hdr := es.submit(t, obj+"/apply", e.form(mine))
		if code != http.StatusSeeOther || hdr.Get("Location") != obj {
			t.Fatalf("apply: status %d, Location %q", code, hdr.Get("Location"))
		}
		got, err := dyn.Resource(gvr).Namespace("default").Get(context.Background(), "g2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 25 {
			t.Errorf("after apply: size %d", size)
		}
		// An unknown field in server-side apply mode is refused by the API
		// server (v1.36 answers 500 "failed to create typed patch object …
		// field not declared in schema" for a custom resource); the editor names
		// the field and its line, and nothing is written.
		e = es.openEditor(t, obj+"/edit")
		code, doc, _ = es.submit(t, obj+"/apply", ssaForm(e, strings.Replace(e.text, "size: 25", "size: 25\n  sise: 1", 1)))
		if title, msg, causes := problem(doc); code < 400 || title != "Unknown field (strict field validation)" || !strings.Contains(causes, ".spec.sise") ||
			doc.Find(`[data-testid="editor-problem"] [data-line]`).Length() == 0 {
			t.Errorf("unknown field in SSA mode: status %d, %s: %s [%s]", code, title, msg, causes)
		}
		if got, _ := dyn.Resource(gvr).Namespace("default").Get(context.Background(), "g2", metav1.GetOptions{}); got.GetResourceVersion() != e.rv {
			t.Error("the refused apply changed the object")
		}
	})

	t.Run("create one through the editor", func(t *testing.T) {
		code, doc, _ := es.get(t, es.sess, list+"/new?namespace=default")
		text := doc.Find(`textarea[name="yaml"]`).Text()
		if code != http.StatusOK || !strings.Contains(text, "kind: Gadget") || !strings.Contains(text, "namespace: default") {
			t.Fatalf("new page: status %d, text %q", code, text)
		}
		mine := strings.Replace(text, "  name: \n", "  name: made-here\n", 1) + "spec:\n  size: 7\n"
		code, _, hdr := es.submit(t, list+"/create", map[string][]string{"yaml": {mine}, "op": {"create"}})
		if code != http.StatusSeeOther || hdr.Get("Location") != list+"/default/made-here" {
			t.Fatalf("create: status %d, Location %q", code, hdr.Get("Location"))
		}
		if _, err := dyn.Resource(gvr).Namespace("default").Get(context.Background(), "made-here", metav1.GetOptions{}); err != nil {
			t.Error(err)
		}
	})

	t.Run("delete one after the dry run and the typed name", func(t *testing.T) {
		obj := list + "/default/g3"
		_, doc, _ := es.get(t, es.sess, obj)
		if href, _ := doc.Find(`[data-testid="delete-link"]`).Attr("href"); href != obj+"/delete" {
			t.Fatalf("delete link %q", href)
		}
		code, doc, _ := es.get(t, es.sess, obj+"/delete")
		uid, _ := doc.Find(`input[name="uid"]`).Attr("value")
		if code != http.StatusOK || doc.Find(`[data-testid="delete-dryrun"]`).Length() != 1 || uid == "" {
			t.Fatalf("delete page: status %d, uid %q: %s", code, uid, doc.Find("main").Text())
		}
		if code, _, _ := es.submit(t, obj+"/delete", map[string][]string{"confirm": {"g2"}, "uid": {uid}}); code != http.StatusUnprocessableEntity {
			t.Errorf("wrong name typed: status %d", code)
		}
		if _, err := dyn.Resource(gvr).Namespace("default").Get(context.Background(), "g3", metav1.GetOptions{}); err != nil {
			t.Fatalf("after a wrong name: %v", err)
		}
		code, _, hdr := es.submit(t, obj+"/delete", map[string][]string{"confirm": {"g3"}, "uid": {uid}})
		if code != http.StatusSeeOther || hdr.Get("Location") != list {
			t.Fatalf("delete: status %d, Location %q", code, hdr.Get("Location"))
		}
		if _, err := dyn.Resource(gvr).Namespace("default").Get(context.Background(), "g3", metav1.GetOptions{}); err == nil {
			t.Error("g3 still exists")
		}
	})

	t.Run("addresses that do not fit the CRD's scope are 404", func(t *testing.T) {
		if code, _, _ := es.get(t, es.sess, list+"/_/g1"); code != http.StatusNotFound {
			t.Errorf("cluster-scope placeholder for a namespaced CRD: status %d", code)
		}
	})
}

// TestCustomResourcesAsAuditor: the auditor reads but may not write; the
// table is read with the user's identity, and writes are refused by the API
// server with its message.
func TestCustomResourcesAsAuditor(t *testing.T) {
	admin := newEditServer(t, testcluster.Admin)
	group := fmt.Sprintf("a%d.clusterdesk.test", time.Now().UnixNano())
	crd := gadgetCRD("gadgets", group)
	installCRD(t, crd)
	waitFor(t, "the cache to see the CRD", 20*time.Second, func() bool { _, err := admin.cache.CRD(crd.Name); return err == nil })
	es := newEditServer(t, testcluster.Auditor)
	waitFor(t, "the auditor's cache to see the CRD", 20*time.Second, func() bool { _, err := es.cache.CRD(crd.Name); return err == nil })
	code, doc, _ := es.get(t, es.sess, "/crds/"+crd.Name+"/instances")
	problem := doc.Find(`[data-testid="instances-problem"]`).Text()
	// The auditor's RBAC covers the console's kinds, not these gadgets.
	if code != http.StatusForbidden || !strings.Contains(problem, `cannot list resource "gadgets"`) {
		t.Errorf("status %d, problem %q", code, problem)
	}
}

// cellsOf is the text of each cell of a table row.
func cellsOf(row *goquery.Selection) []string {
	var out []string
	row.First().Find("th, td").Not(".tick-col").Each(func(_ int, s *goquery.Selection) { out = append(out, strings.TrimSpace(s.Text())) })
	return out
}
