//go:build integration

package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/flowschemaform/form"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// fsForm is a valid create form for name: one rule, one subject, one
// namespaced resource rule, an existing priority level.
func fsForm(name string) model.FlowSchemaForm {
	return model.FlowSchemaForm{
		Name: name, Precedence: "4321", PriorityLevel: "workload-low",
		Rules: []model.FormRule{{
			Subjects:      []model.FormSubject{{Kind: "User", Name: "form-tester"}},
			ResourceRules: []model.FormResourceRule{{Verbs: []string{"get", "list"}, APIGroups: `""`, Resources: "configmaps", Namespaces: "default"}},
		}},
	}
}

// realWrites and dryRuns count the audit lines of writes of name.
func realWrites(log, name string) int { return writeLines(log, name, "dryRun=false") }
func dryRuns(log, name string) int    { return writeLines(log, name, "dryRun=true") }

func writeLines(log, name, mode string) int {
	n := 0
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, " name="+name+" ") && strings.Contains(l, " "+mode+" ") {
			n++
		}
	}
	return n
}

// settled waits until the API server has written the status of a new
// FlowSchema (its Dangling condition): until then, that write may still come
// and move the resourceVersion under an edit.
func (es *editServer) settled(t *testing.T, name string) {
	t.Helper()
	waitFor(t, "the API server to write the status of "+name, 20*time.Second, func() bool {
		fs, err := present.FlowSchemaOf(es.live(t, kube.FlowSchemas, name))
		if err != nil {
			return false
		}
		for _, c := range fs.Status.Conditions {
			if c.Type == "Dangling" {
				return true
			}
		}
		return false
	})
}

func withOp(v url.Values, op string) url.Values {
	v.Set("op", op)
	return v
}

// fieldErrors are the messages shown beside the field key.
func fieldErrors(doc *goquery.Document, key string) string {
	return doc.Find(`[data-testid="fsform-error"][data-field="` + key + `"]`).Text()
}

// TestFlowSchemaFormBadInputWritesNothing sends each kind of bad input the
// form allows through Preview and Save: the API server's message is shown
// beside the field and nothing is stored.
func TestFlowSchemaFormBadInputWritesNothing(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	k := es.kind(t, kube.FlowSchemas)
	ctx := context.Background()

	cases := []struct {
		name   string
		mut    func(f *model.FlowSchemaForm)
		status int
		field  string
		want   string
	}{
		{"precedence 10001", func(f *model.FlowSchemaForm) { f.Precedence = "10001" }, http.StatusUnprocessableEntity, "precedence", "must not be greater than 10000"},
		{"empty subject list", func(f *model.FlowSchemaForm) { f.Rules[0].Subjects = nil }, http.StatusUnprocessableEntity, "r0.subjects", "subjects must contain at least one value"},
		{"* mixed with other verbs", func(f *model.FlowSchemaForm) { f.Rules[0].ResourceRules[0].Verbs = []string{"*", "get"} }, http.StatusUnprocessableEntity, "r0.rr0.verbs", "if '*' is present, must not specify other verbs"},
		{"no resource or non-resource rule", func(f *model.FlowSchemaForm) { f.Rules[0].ResourceRules = nil }, http.StatusUnprocessableEntity, "r0", "at least one of resourceRules and nonResourceRules has to be non-empty"},
		{"non-resource URL wildcard inside", func(f *model.FlowSchemaForm) {
			f.Rules[0].NonResourceRules = []model.FormNonResourceRule{{Verbs: []string{"get"}, URLs: "/api*"}}
		}, http.StatusUnprocessableEntity, "r0.nr0.urls", "wildcard can only do suffix matching"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := uniq("fsform-bad")
			f := fsForm(name)
			c.mut(&f)
			for _, op := range []string{"preview", "save"} {
				code, doc, _ := es.submit(t, urls.FlowSchemaFormNew, withOp(form.Values(f), op))
				if code != c.status {
					t.Fatalf("%s: status %d, want %d: %s", op, code, c.status, doc.Find(`[data-testid="editor-problem"]`).Text())
				}
				if _, msg, _ := problem(doc); !strings.Contains(msg, `"`+name+`" is invalid: 1 problem, each shown beside its field`) {
					t.Errorf("%s: message above the form: %q", op, msg)
				}
				if got := fieldErrors(doc, c.field); !strings.Contains(got, c.want) {
					t.Errorf("%s: beside %s: %q, want the API server's %q; problems: %s", op, c.field, got, c.want, doc.Find(`[data-testid="editor-problem"]`).Text())
				}
				// The form comes back with the values as typed.
				if v := doc.Find(`#fsf-precedence`).AttrOr("value", ""); v != f.Precedence {
					t.Errorf("%s: precedence shown %q, typed %q", op, v, f.Precedence)
				}
				if doc.Find(`[data-testid="preview-diff"]`).Length() != 0 {
					t.Errorf("%s: a refused object has a preview", op)
				}
			}
			if _, err := es.admin.Get(ctx, k, name); !apierrors.IsNotFound(err) {
				t.Fatalf("the refused FlowSchema exists: %v", err)
			}
			if realWrites(es.log.String(), name) != 0 {
				t.Errorf("a real write was attempted for %s", name)
			}
			if dryRuns(es.log.String(), name) == 0 {
				t.Errorf("no dry run was logged for %s: the API server was not asked", name)
			}
		})
	}

	// The API server does not refuse a precedence of 0: it takes it as "not
	// set" and defaults it to 1000 (v1 and v1beta3). Its answer is shown
	// beside the field, and Save stores nothing.
	t.Run("precedence 0", func(t *testing.T) {
		name := uniq("fsform-zero")
		f := fsForm(name)
		f.Precedence = "0"
		code, doc, _ := es.submit(t, urls.FlowSchemaFormNew, withOp(form.Values(f), "preview"))
		if code != http.StatusOK || !strings.Contains(fieldErrors(doc, "precedence"), "would store 1000, not 0") ||
			!strings.Contains(doc.Find(`[data-testid="preview-diff"]`).Text(), "matchingPrecedence: 1000") {
			t.Fatalf("preview: status %d, beside precedence %q", code, fieldErrors(doc, "precedence"))
		}
		code, doc, _ = es.submit(t, urls.FlowSchemaFormNew, withOp(form.Values(f), "save"))
		if title, _, _ := problem(doc); code != http.StatusUnprocessableEntity || title != "The API server would store other values" ||
			!strings.Contains(fieldErrors(doc, "precedence"), "would store 1000, not 0") {
			t.Fatalf("save: status %d, %q, beside precedence %q", code, title, fieldErrors(doc, "precedence"))
		}
		if _, err := es.admin.Get(ctx, k, name); !apierrors.IsNotFound(err) {
			t.Fatalf("precedence 0 was stored: %v", err)
		}
		if realWrites(es.log.String(), name) != 0 {
			t.Error("Save sent the write")
		}
	})

	t.Run("precedence that is not a number is refused before sending", func(t *testing.T) {
		f := fsForm(uniq("fsform-nan"))
		f.Precedence = "ten"
		code, doc, _ := es.submit(t, urls.FlowSchemaFormNew, withOp(form.Values(f), "save"))
		if code != http.StatusUnprocessableEntity || !strings.Contains(fieldErrors(doc, "precedence"), "not a whole number") {
			t.Fatalf("status %d, beside precedence %q", code, fieldErrors(doc, "precedence"))
		}
		if strings.Contains(es.log.String(), "name="+f.Name) {
			t.Error("a request was sent for a form clusterdesk refused")
		}
	})

	t.Run("unknown priority level: accepted, with the Dangling warning", func(t *testing.T) {
		name := uniq("fsform-dangling")
		f := fsForm(name)
		f.PriorityLevel, f.PriorityTyped = model.PriorityLevelOther, "no-such-level"
		code, doc, _ := es.submit(t, urls.FlowSchemaFormNew, withOp(form.Values(f), "preview"))
		if code != http.StatusOK {
			t.Fatalf("preview: status %d: %s", code, doc.Find(`[data-testid="editor-problem"]`).Text())
		}
		if w := doc.Find(`[data-testid="fsform-dangling"]`).Text(); !strings.Contains(w, "no-such-level") || !strings.Contains(w, "Dangling") {
			t.Errorf("Dangling warning: %q", w)
		}
		if !strings.Contains(doc.Find(`[data-testid="preview-diff"]`).Text(), "name: no-such-level") {
			t.Error("the preview does not show the dry run's object")
		}
		if h := doc.Find(`[data-testid="fsform-hint"][data-field="prioritylevel"]`).Text(); !strings.Contains(h, "Dangling") {
			t.Errorf("hint beside the priority level: %q", h)
		}
		if _, err := es.admin.Get(ctx, k, name); !apierrors.IsNotFound(err) {
			t.Fatalf("a preview created the FlowSchema: %v", err)
		}
	})

	t.Run("duplicate name on create", func(t *testing.T) {
		name := uniq("fsform-dup")
		existing := es.create(t, kube.FlowSchemas, "apiVersion: "+page.APIVersion(k)+"\nkind: FlowSchema\nmetadata:\n  name: "+name+
			"\nspec:\n  matchingPrecedence: 7000\n  priorityLevelConfiguration:\n    name: global-default\n")
		f := fsForm(name)
		for _, op := range []string{"preview", "save"} {
			code, doc, _ := es.submit(t, urls.FlowSchemaFormNew, withOp(form.Values(f), op))
			if code != http.StatusConflict || !strings.Contains(fieldErrors(doc, "name"), "already exists") {
				t.Fatalf("%s: status %d, beside name %q", op, code, fieldErrors(doc, "name"))
			}
		}
		// The API server writes the status (conditions) of a new FlowSchema
		// itself: the generation counts changes of the spec.
		after := es.live(t, kube.FlowSchemas, name)
		if after.GetGeneration() != existing.GetGeneration() || !reflect.DeepEqual(after.Object["spec"], existing.Object["spec"]) {
			t.Errorf("the existing FlowSchema changed: generation %d → %d, spec %v", existing.GetGeneration(), after.GetGeneration(), after.Object["spec"])
		}
	})

	t.Run("bad input on edit changes nothing", func(t *testing.T) {
		name := uniq("fsform-badedit")
		es.create(t, kube.FlowSchemas, "apiVersion: "+page.APIVersion(k)+"\nkind: FlowSchema\nmetadata:\n  name: "+name+
			"\nspec:\n  matchingPrecedence: 7000\n  priorityLevelConfiguration:\n    name: global-default\n  rules:\n  - subjects:\n    - kind: Group\n      group:\n        name: x\n    nonResourceRules:\n    - verbs: [get]\n      nonResourceURLs: [/x]\n")
		es.settled(t, name)
		before := es.live(t, kube.FlowSchemas, name)
		code, doc, _ := es.get(t, es.sess, urls.FlowSchemaForm(name))
		if code != http.StatusOK {
			t.Fatalf("edit form: %d", code)
		}
		v := browserValues(doc.Find(`form[data-testid="fsform"]`))
		v.Set("precedence", "10001")
		v.Del("r0.nr0.verbs")
		v.Add("r0.nr0.verbs", "*")
		v.Add("r0.nr0.verbs", "get")
		code, doc, _ = es.submit(t, urls.FlowSchemaForm(name), withOp(v, "save"))
		if code != http.StatusUnprocessableEntity {
			t.Fatalf("status %d", code)
		}
		if !strings.Contains(fieldErrors(doc, "precedence"), "must not be greater than 10000") ||
			!strings.Contains(fieldErrors(doc, "r0.nr0.verbs"), "if '*' is present, must not specify other verbs") {
			t.Errorf("beside precedence %q, beside verbs %q", fieldErrors(doc, "precedence"), fieldErrors(doc, "r0.nr0.verbs"))
		}
		if after := es.live(t, kube.FlowSchemas, name); after.GetGeneration() != before.GetGeneration() || !reflect.DeepEqual(after.Object["spec"], before.Object["spec"]) {
			t.Errorf("the FlowSchema changed: generation %d → %d", before.GetGeneration(), after.GetGeneration())
		}
	})
}

// TestFlowSchemaFormCreateThenEdit builds a FlowSchema in the form (adding a
// row on the way, without script), previews and saves it, then edits it:
// fields the form does not show survive, and a change made meanwhile is a
// conflict that keeps the values.
func TestFlowSchemaFormCreateThenEdit(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	k := es.kind(t, kube.FlowSchemas)
	ctx := context.Background()
	name := uniq("fsform-flow")
	t.Cleanup(func() { _, _ = es.admin.Delete(ctx, k, name, "", false, "") })

	code, doc, _ := es.get(t, es.sess, urls.FlowSchemaFormNew)
	if code != http.StatusOK || doc.Find(`[data-testid="fsform-yaml-link"]`).AttrOr("href", "") != "/flowschemas/new" {
		t.Fatalf("new form: status %d", code)
	}
	f := fsForm(name)
	code, doc, _ = es.submit(t, urls.FlowSchemaFormNew, withOp(form.Values(f), "add-subject:0"))
	if code != http.StatusOK || doc.Find(`[data-testid="fsform-subject"]`).Length() != 2 {
		t.Fatalf("add subject: status %d, %d subjects", code, doc.Find(`[data-testid="fsform-subject"]`).Length())
	}
	v := browserValues(doc.Find(`form[data-testid="fsform"]`))
	if v.Get("name") != name || v.Get("r0.s0.name") != "form-tester" || v.Get("r0.rr0.resources") != "configmaps" {
		t.Fatalf("adding a row lost input: %v", v)
	}
	v.Set("r0.s1.kind", "ServiceAccount")
	v.Set("r0.s1.namespace", "kube-system")
	v.Set("r0.s1.name", "*")

	code, doc, _ = es.submit(t, urls.FlowSchemaFormNew, withOp(v, "preview"))
	if code != http.StatusOK || doc.Find(`[data-testid="fsform-verdict"]`).Length() != 1 ||
		!strings.Contains(doc.Find(`[data-testid="preview-diff"]`).Text(), "name: "+name) {
		t.Fatalf("preview: status %d: %s", code, doc.Find(`[data-testid="editor-problem"]`).Text())
	}
	if _, err := es.admin.Get(ctx, k, name); !apierrors.IsNotFound(err) {
		t.Fatalf("preview stored it: %v", err)
	}
	code, _, hdr := es.submit(t, urls.FlowSchemaFormNew, withOp(v, "save"))
	if code != http.StatusSeeOther || hdr.Get("Location") != "/flowschemas/"+name {
		t.Fatalf("save: status %d, Location %q", code, hdr.Get("Location"))
	}
	fs, err := present.FlowSchemaOf(es.live(t, kube.FlowSchemas, name))
	if err != nil {
		t.Fatal(err)
	}
	if fs.Spec.MatchingPrecedence != 4321 || len(fs.Spec.Rules) != 1 || len(fs.Spec.Rules[0].Subjects) != 2 ||
		fs.Spec.Rules[0].Subjects[1].ServiceAccount == nil || fs.Spec.Rules[0].Subjects[1].ServiceAccount.Name != "*" ||
		len(fs.Spec.Rules[0].ResourceRules[0].APIGroups) != 1 || fs.Spec.Rules[0].ResourceRules[0].APIGroups[0] != "" {
		t.Fatalf("stored spec: %+v", fs.Spec)
	}

	// Labels and annotations set behind the form's back survive an edit.
	es.settled(t, name)
	live := es.live(t, kube.FlowSchemas, name)
	live.SetLabels(map[string]string{"team": "platform"})
	live.SetAnnotations(map[string]string{"note": "keep me"})
	if _, err := es.admin.Update(ctx, k, live, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the cache to see the label", 10*time.Second, func() bool {
		fs, err := es.cache.FlowSchema(name)
		return err == nil && fs.Labels["team"] == "platform"
	})
	code, doc, _ = es.get(t, es.sess, urls.FlowSchemaForm(name))
	if code != http.StatusOK || doc.Find(`[data-testid="fsform-subject"]`).Length() != 2 {
		t.Fatalf("edit form: status %d", code)
	}
	edit := browserValues(doc.Find(`form[data-testid="fsform"]`))
	edit.Set("precedence", "4322")
	edit.Set("distinguisher", "ByUser")
	code, doc, _ = es.submit(t, urls.FlowSchemaForm(name), withOp(edit, "preview"))
	if code != http.StatusOK || !strings.Contains(doc.Find(`[data-testid="preview-diff"]`).Text(), "matchingPrecedence: 4322") {
		t.Fatalf("edit preview: status %d: %s", code, doc.Find(`[data-testid="editor-problem"]`).Text())
	}
	code, _, hdr = es.submit(t, urls.FlowSchemaForm(name), withOp(edit, "save"))
	if code != http.StatusSeeOther || hdr.Get("Location") != "/flowschemas/"+name {
		t.Fatalf("edit save: status %d", code)
	}
	after := es.live(t, kube.FlowSchemas, name)
	fs, _ = present.FlowSchemaOf(after)
	if fs.Spec.MatchingPrecedence != 4322 || fs.Spec.DistinguisherMethod == nil || fs.Labels["team"] != "platform" || fs.Annotations["note"] != "keep me" {
		t.Fatalf("after edit: precedence %d, distinguisher %v, labels %v, annotations %v", fs.Spec.MatchingPrecedence, fs.Spec.DistinguisherMethod, fs.Labels, fs.Annotations)
	}

	// New versions that read the same as the one the form started from (here
	// a label added and removed again; in life, the API server writing the
	// status) are no conflict.
	_, doc, _ = es.get(t, es.sess, urls.FlowSchemaForm(name))
	same := browserValues(doc.Find(`form[data-testid="fsform"]`))
	for _, labels := range []map[string]string{{"team": "platform", "tmp": "x"}, {"team": "platform"}} {
		o := es.live(t, kube.FlowSchemas, name)
		o.SetLabels(labels)
		if _, err := es.admin.Update(ctx, k, o, false); err != nil {
			t.Fatal(err)
		}
	}
	if es.live(t, kube.FlowSchemas, name).GetResourceVersion() == same.Get("resourceVersion") {
		t.Fatal("the version did not move")
	}
	same.Set("precedence", "4399")
	if code, doc, _ = es.submit(t, urls.FlowSchemaForm(name), withOp(same, "save")); code != http.StatusSeeOther {
		t.Fatalf("save over an unchanged-looking new version: status %d: %s", code, doc.Find(`[data-testid="conflict"]`).Text())
	}

	// A change on the server after the form was opened: 409, values kept.
	_, doc, _ = es.get(t, es.sess, urls.FlowSchemaForm(name))
	stale := browserValues(doc.Find(`form[data-testid="fsform"]`))
	theirs := es.live(t, kube.FlowSchemas, name)
	theirs.SetLabels(map[string]string{"team": "someone-else"})
	if _, err := es.admin.Update(ctx, k, theirs, false); err != nil {
		t.Fatal(err)
	}
	stale.Set("precedence", "4400")
	code, doc, _ = es.submit(t, urls.FlowSchemaForm(name), withOp(stale, "save"))
	if code != http.StatusConflict || doc.Find(`[data-testid="conflict"]`).Length() != 1 ||
		!strings.Contains(doc.Find(`[data-testid="conflict-diff"]`).Text(), "someone-else") {
		t.Fatalf("conflict: status %d", code)
	}
	if v := doc.Find(`#fsf-precedence`).AttrOr("value", ""); v != "4400" {
		t.Errorf("conflict lost the typed precedence: %q", v)
	}
	code, doc, _ = es.submit(t, urls.FlowSchemaForm(name), withOp(browserValues(doc.Find(`form[data-testid="fsform"]`)), "rebase"))
	if code != http.StatusOK || doc.Find(`[data-testid="fsform-rebased"]`).Length() != 1 {
		t.Fatalf("rebase: status %d", code)
	}
	code, _, _ = es.submit(t, urls.FlowSchemaForm(name), withOp(browserValues(doc.Find(`form[data-testid="fsform"]`)), "save"))
	if code != http.StatusSeeOther {
		t.Fatalf("save after rebase: status %d", code)
	}
	fs, _ = present.FlowSchemaOf(es.live(t, kube.FlowSchemas, name))
	if fs.Spec.MatchingPrecedence != 4400 || fs.Labels["team"] != "someone-else" {
		t.Errorf("after rebase: precedence %d, labels %v", fs.Spec.MatchingPrecedence, fs.Labels)
	}
	log := es.log.String()
	for _, want := range []string{"verb=create kind=FlowSchema name=" + name, "verb=update kind=FlowSchema name=" + name} {
		if !strings.Contains(log, want) {
			t.Errorf("audit log lacks %q", want)
		}
	}
}

// TestClassifierOldAddress: /flowschemas/classify redirects to the
// classifier, unless a FlowSchema is named "classify": then it is its page.
func TestClassifierOldAddress(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	k := es.kind(t, kube.FlowSchemas)
	req := httptest.NewRequest(http.MethodGet, "/flowschemas/classify?user=bob&verb=get&resource=pods", nil)
	req.AddCookie(es.sess)
	rec := es.do(req)
	if rec.Code != http.StatusFound || rec.Header().Get("Location") != urls.Classify+"?user=bob&verb=get&resource=pods" {
		t.Fatalf("old address: status %d, Location %q", rec.Code, rec.Header().Get("Location"))
	}
	es.create(t, kube.FlowSchemas, "apiVersion: "+page.APIVersion(k)+"\nkind: FlowSchema\nmetadata:\n  name: classify\nspec:\n  matchingPrecedence: 7001\n  priorityLevelConfiguration:\n    name: global-default\n")
	waitFor(t, "the cache to see FlowSchema classify", 10*time.Second, func() bool {
		_, err := es.cache.FlowSchema("classify")
		return err == nil
	})
	code, doc, _ := es.get(t, es.sess, "/flowschemas/classify")
	if code != http.StatusOK || doc.Find(`[data-testid="detail-name"]`).Text() != "classify" {
		t.Fatalf("FlowSchema named classify: status %d, page %q", code, doc.Find("h1").Text())
	}
	code, doc, _ = es.get(t, es.sess, urls.Classify)
	if code != http.StatusOK || doc.Find(`[data-testid="classify-form"]`).Length() != 1 {
		t.Fatalf("classifier: status %d", code)
	}
}
