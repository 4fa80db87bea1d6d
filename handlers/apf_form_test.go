package handlers

import (
	"bytes"
	"context"
	"net/url"
	"reflect"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/internal/flowschemaform/form"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// browserValues collects what a browser would post for the form: inputs
// (checkboxes and radios when checked), selected options, textareas; no buttons.
func browserValues(sel *goquery.Selection) url.Values {
	v := url.Values{}
	sel.Find("input[name], select[name], textarea[name]").Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Attr("name")
		if _, disabled := s.Attr("disabled"); disabled {
			return
		}
		switch goquery.NodeName(s) {
		case "select":
			opt := s.Find("option[selected]").First()
			if opt.Length() == 0 {
				opt = s.Find("option").First()
			}
			v.Add(name, opt.AttrOr("value", opt.Text()))
		case "textarea":
			v.Add(name, s.Text())
		default:
			switch s.AttrOr("type", "text") {
			case "checkbox", "radio":
				if _, checked := s.Attr("checked"); checked {
					v.Add(name, s.AttrOr("value", "on"))
				}
			default:
				v.Add(name, s.AttrOr("value", ""))
			}
		}
	})
	return v
}

func renderForm(t *testing.T, p model.FlowSchemaFormPage) *goquery.Selection {
	t.Helper()
	var buf bytes.Buffer
	if err := pages.FlowSchemaFormBody(p).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return doc.Find(`form[data-testid="fsform"]`)
}

// TestFlowSchemaFormPostsWhatItShows renders the form for a filled-in
// FlowSchema and decodes what a browser would post: the same form comes back.
// The template's field names and the decoder cannot drift apart.
func TestFlowSchemaFormPostsWhatItShows(t *testing.T) {
	want := model.FlowSchemaForm{
		Name: "batch", ResourceVersion: "42", Base: "b64", Precedence: "900", PriorityLevel: "workload-low", Distinguisher: "ByNamespace",
		Rules: []model.FormRule{
			{
				Subjects:      []model.FormSubject{{Kind: "User", Name: "alice"}, {Kind: "ServiceAccount", Namespace: "ci", Name: "*"}},
				ResourceRules: []model.FormResourceRule{{Verbs: []string{"get", "list"}, APIGroups: `"", apps`, Resources: "pods", Namespaces: "ci"}},
			},
			{
				Subjects:         []model.FormSubject{{Kind: "Group", Name: "system:authenticated"}},
				ResourceRules:    []model.FormResourceRule{{Verbs: []string{"*"}, APIGroups: "*", Resources: "nodes", ClusterScope: true}},
				NonResourceRules: []model.FormNonResourceRule{{Verbs: []string{"get"}, URLs: "/healthz, /apis/*"}},
			},
			{}, // a rule whose rows were all removed
		},
	}
	for _, create := range []bool{false, true} {
		p := model.FlowSchemaFormPage{Create: create, Form: want, Action: "/x", PriorityLevels: []string{"global-default", "workload-low"}}
		sel := renderForm(t, p)
		got, op := form.Parse(browserValues(sel))
		exp := want
		if create {
			exp.ResourceVersion, exp.Base = "", ""
		} else {
			// The name is fixed when editing: it comes from the URL, not the form.
			got.Name = want.Name
		}
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("create=%v: posted form decodes to\n%+v\nwant\n%+v", create, got, exp)
		}
		if op.Kind != form.OpNone {
			t.Errorf("no button pressed, op %+v", op)
		}
		// Every button names an op the server knows, with indices in range.
		sel.Find(`button[name="op"]`).Each(func(_ int, b *goquery.Selection) {
			val := b.AttrOr("value", "")
			op := form.ParseOp(val)
			if op.Kind == form.OpNone {
				t.Errorf("button %q: unknown op", val)
			}
			if op.Edits() && op.Kind != form.OpAddRule && op.Rule >= len(want.Rules) {
				t.Errorf("button %q: rule out of range", val)
			}
			if op.Edits() && b.AttrOr("hx-post", "") != "/x" {
				t.Errorf("row button %q does not post to the form's URL with htmx", val)
			}
		})
		// Enter in a field presses the first submit button: Preview.
		if first := sel.Find(`button[type="submit"]`).First().AttrOr("value", ""); first != "preview" {
			t.Errorf("first submit button is %q, want preview", first)
		}
	}
}

func TestFlowSchemaFormShowsErrorsAndHintsBesideFields(t *testing.T) {
	p := model.FlowSchemaFormPage{
		Form:   form.New(),
		Action: "/x",
		Errors: map[string][]string{"precedence": {"Invalid value: 0: must be a positive value"}, "r0.subjects": {"Required value: subjects must contain at least one value"}},
		Hints:  map[string][]string{"r0.rr0.verbs": {"* must be the only verb."}},
	}
	sel := renderForm(t, p)
	for key, want := range map[string]string{"precedence": "must be a positive value", "r0.subjects": "at least one value"} {
		got := sel.Find(`[data-testid="fsform-error"][data-field="` + key + `"]`).Text()
		if got == "" || !bytes.Contains([]byte(got), []byte(want)) {
			t.Errorf("error beside %s: %q", key, got)
		}
	}
	if sel.Find(`#fsf-precedence[aria-invalid="true"][aria-describedby="fsf-precedence-notes"]`).Length() != 1 {
		t.Error("the precedence input is not marked invalid and described by its error")
	}
	if sel.Find(`[data-testid="fsform-hint"][data-field="r0.rr0.verbs"]`).Text() != "* must be the only verb." {
		t.Error("hint not shown beside the verbs")
	}
}
