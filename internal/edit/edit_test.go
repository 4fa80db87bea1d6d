package edit

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var fsTarget = Target{APIVersion: "flowcontrol.apiserver.k8s.io/v1", Kind: "FlowSchema", Name: "demo"}

const fsText = `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata:
  name: demo
spec:
  matchingPrecedence: 9000
  priorityLevelConfiguration:
    name: global-default
`

func TestParse(t *testing.T) {
	tests := []struct {
		name, text string
		target     Target
		title      string // "" for success
		line       int
		contains   string
	}{
		{name: "valid", text: fsText, target: fsTarget},
		{name: "CRLF from a textarea", text: strings.ReplaceAll(fsText, "\n", "\r\n"), target: fsTarget},
		{name: "empty", text: "  \n", target: fsTarget, title: "Nothing to send"},
		{name: "invalid YAML", text: "apiVersion: v1\nkind: [unclosed\nmetadata:\n", target: fsTarget, title: "Invalid YAML", contains: "line"},
		{name: "bad indentation", text: "apiVersion: a\n kind: b\nmetadata: {}\n", target: fsTarget, title: "Invalid YAML", line: 2},
		{name: "duplicate key", text: fsText + "spec: {}\n", target: fsTarget, title: "Invalid YAML", contains: "spec"},
		{name: "a list", text: "- a\n- b\n", target: fsTarget, title: "Not an object"},
		{name: "a scalar", text: "hello\n", target: fsTarget, title: "Not an object"},
		{name: "two documents", text: fsText + "---\n" + fsText, target: fsTarget, title: "More than one object"},
		{name: "leading separator is one document", text: "---\n" + fsText, target: fsTarget},
		{name: "other kind", text: strings.Replace(fsText, "kind: FlowSchema", "kind: PriorityLevelConfiguration", 1), target: fsTarget,
			title: "Wrong kind or apiVersion", line: 2, contains: `kind "PriorityLevelConfiguration"`},
		{name: "other version", text: strings.Replace(fsText, "/v1\n", "/v1beta3\n", 1), target: fsTarget,
			title: "Wrong kind or apiVersion", line: 1, contains: "v1beta3"},
		{name: "other name", text: strings.Replace(fsText, "name: demo", "name: other", 1), target: fsTarget,
			title: "Name differs from the page", line: 4, contains: `"other"`},
		{name: "create needs a name", text: strings.Replace(fsText, "  name: demo\n", "  labels: {}\n", 1),
			target: Target{APIVersion: fsTarget.APIVersion, Kind: "FlowSchema"}, title: "No name", line: 3},
		{name: "name read as a boolean", text: strings.Replace(fsText, "name: demo", "name: n", 1), target: fsTarget, title: "Wrong type", contains: "quote"},
		{name: "create with any name", text: fsText, target: Target{APIVersion: fsTarget.APIVersion, Kind: "FlowSchema"}},
		// Keys are read spelled exactly, as the API server reads them (FuzzParse found these accepted).
		{name: "apiVersion in another case", text: strings.Replace(fsText, "apiVersion:", "ApiVersion:", 1), target: fsTarget,
			title: "Wrong kind or apiVersion", contains: `apiVersion ""`},
		{name: "metadata in another case", text: strings.Replace(fsText, "metadata:", "metAdAtA:", 1), target: fsTarget,
			title: "Name differs from the page", contains: `names ""`},
		{name: "name in another case", text: strings.Replace(fsText, "  name: demo", "  nAme: demo", 1), target: fsTarget,
			title: "Name differs from the page", contains: `names ""`},
		{name: "metadata not a mapping", text: strings.Replace(fsText, "metadata:\n  name: demo\n", "metadata: demo\n", 1), target: fsTarget,
			title: "Wrong type", contains: "metadata must be a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := Parse(tt.text, tt.target)
			if tt.title == "" {
				if err != nil || obj.GetName() != "demo" || obj.GetKind() != "FlowSchema" {
					t.Fatalf("Parse = %v, %v", obj, err)
				}
				return
			}
			var in *InputError
			if !errors.As(err, &in) {
				t.Fatalf("err = %v, want an InputError %q", err, tt.title)
			}
			if in.Title != tt.title || (tt.line != 0 && in.Line != tt.line) || !strings.Contains(in.Message, tt.contains) {
				t.Errorf("got %q line %d: %s; want %q line %d containing %q", in.Title, in.Line, in.Message, tt.title, tt.line, tt.contains)
			}
		})
	}
}

func TestParseKeepsIntegers(t *testing.T) {
	obj, err := Parse(strings.Replace(fsText, "9000", "9007199254740993", 1), fsTarget)
	if err != nil {
		t.Fatal(err)
	}
	if v := obj.Object["spec"].(map[string]any)["matchingPrecedence"]; v != int64(9007199254740993) {
		t.Errorf("matchingPrecedence = %#v, want the exact int64", v)
	}
}

func TestLocate(t *testing.T) {
	text := `apiVersion: v1
kind: X
metadata:
  name: n
  labels:
    app.kubernetes.io/name: web
spec:
  rules:
  - subjects:
    - kind: User
      user:
        name: alice
    - kind: Group
  matchingPrecedence: 0
`
	tests := []struct {
		path string
		line int
	}{
		{"metadata.name", 4},
		{".spec.matchingPrecedence", 14},
		{"spec.rules[0].subjects[1].kind", 13},
		{"spec.rules[0].subjects[0].user.name", 12},
		{"metadata.labels[app.kubernetes.io/name]", 6},
		{"spec.rules[0].subjects[7].kind", 9}, // deepest found: subjects
		{"spec.missing", 7},                   // deepest found: spec
		{"nothing", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := Locate(text, tt.path); got != tt.line {
			t.Errorf("Locate(%q) = %d, want %d", tt.path, got, tt.line)
		}
	}
	if got := Locate("a: [", "a"); got != 0 {
		t.Errorf("unparsable text: %d", got)
	}
}

func TestDiff(t *testing.T) {
	from := "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\ng: 7\nh: 8\ni: 9\nj: 10\n"
	to := "a: 1\nb: 2\nc: 3\nd: 4\ne: five\nf: 6\ng: 7\nh: 8\ni: 9\nj: 10\nk: 11\n"
	d := Diff("T", "old", "new", from, to)
	if d.Added != 2 || d.Removed != 1 {
		t.Fatalf("+%d -%d, want +2 -1", d.Added, d.Removed)
	}
	var got []string
	for _, l := range d.Lines {
		got = append(got, string(l.Kind[0])+l.Old+"/"+l.New+" "+l.Text)
	}
	want := []string{
		"h/ @@ -2,9 +2,10 @@",
		"c2/2 b: 2", "c3/3 c: 3", "c4/4 d: 4",
		"r5/ e: 5", "a/5 e: five",
		"c6/6 f: 6", "c7/7 g: 7", "c8/8 h: 8", "c9/9 i: 9", "c10/10 j: 10",
		"a/11 k: 11",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diff lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if eq := Diff("T", "a", "b", from, strings.ReplaceAll(from, "\n", "\r\n")); len(eq.Lines) != 0 || eq.Note == "" {
		t.Errorf("equal texts (up to CRLF) gave %d lines, note %q", len(eq.Lines), eq.Note)
	}
	if all := Diff("T", "", "new", "", "x: 1\n"); all.Added != 1 || all.Lines[0].Text != "@@ -0,0 +1 @@" {
		t.Errorf("from nothing: %+v", all.Lines)
	}
}

func TestRebase(t *testing.T) {
	base := "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\n"
	mine := "a: 1\nb: two\nc: 3\nd: 4\ne: 5\nf: 6\n"
	current := "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: six\n"
	got, err := Rebase(base, mine, current)
	if err != nil || got != "a: 1\nb: two\nc: 3\nd: 4\ne: 5\nf: six\n" {
		t.Fatalf("Rebase = %q, %v", got, err)
	}
	if got, _ := Rebase(base, base, current); got != current {
		t.Errorf("nothing of mine: %q", got)
	}
	if got, _ := Rebase(base, strings.ReplaceAll(mine, "\n", "\r\n"), base); got != mine {
		t.Errorf("nothing changed on the server: %q", got)
	}
	if _, err := Rebase(base, "a: 1\nb: mine\n", "a: 1\nb: theirs\n"); !errors.Is(err, ErrOverlap) {
		t.Errorf("overlapping edits: %v, want ErrOverlap", err)
	}
}

func TestBaseRoundTrip(t *testing.T) {
	text := strings.Repeat(fsText, 100)
	enc := EncodeBase(text)
	if len(enc) > len(text)/5 {
		t.Errorf("encoded %d bytes of YAML into %d: the compression is not helping", len(text), len(enc))
	}
	got, err := DecodeBase(enc)
	if err != nil || got != text {
		t.Fatalf("DecodeBase: %v", err)
	}
	for _, bad := range []string{"!!", "aGVsbG8", ""} {
		if _, err := DecodeBase(bad); err == nil {
			t.Errorf("DecodeBase(%q) accepted", bad)
		}
	}
}

func TestExamplesParse(t *testing.T) {
	kinds := map[string]string{
		"CustomResourceDefinition":       "apiextensions.k8s.io/v1",
		"CSIDriver":                      "storage.k8s.io/v1",
		"FlowSchema":                     "flowcontrol.apiserver.k8s.io/v1",
		"PriorityLevelConfiguration":     "flowcontrol.apiserver.k8s.io/v1beta3",
		"ValidatingWebhookConfiguration": "admissionregistration.k8s.io/v1",
		"CertificateSigningRequest":      "certificates.k8s.io/v1",
	}
	for kind, av := range kinds {
		text, ok, err := Example(kind, av)
		if !ok || err != nil {
			t.Fatalf("%s: ok %v, %v", kind, ok, err)
		}
		obj, err := Parse(text, Target{APIVersion: av, Kind: kind})
		if err != nil || !strings.Contains(obj.GetName(), "example") {
			t.Errorf("%s: %v (name %q)", kind, err, obj.GetName())
		}
	}
	if _, ok, _ := Example("Pod", "v1"); ok {
		t.Error("an example for a kind the console does not edit")
	}
}

func TestProblem(t *testing.T) {
	text := fsText
	gr := schema.GroupResource{Group: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: "FlowSchema"}, "demo", field.ErrorList{
		field.Invalid(field.NewPath("spec", "matchingPrecedence"), 0, "must be between 1 and 10000, inclusive"),
	})
	tests := []struct {
		name  string
		err   error
		want  Failure
		cause *Cause
	}{
		{name: "local", err: &InputError{Title: "Invalid YAML", Message: "m", Line: 3},
			want: Failure{Title: "Invalid YAML", Message: "m", Local: true, Line: 3}},
		{name: "invalid with causes", err: invalid,
			want:  Failure{Title: "The API server refused the object", Line: 6},
			cause: &Cause{Field: "spec.matchingPrecedence", Line: 6}},
		{name: "strict unknown field", err: apierrors.NewBadRequest(`FlowSchema in version "v1" cannot be handled as a FlowSchema: strict decoding error: unknown field "spec.priorityLevelConfiguration.nmae"`),
			want:  Failure{Title: "Unknown field (strict field validation)", Line: 7},
			cause: &Cause{Field: "spec.priorityLevelConfiguration.nmae", Message: "unknown field", Line: 7}},
		{name: "forbidden", err: apierrors.NewForbidden(gr, "demo", errors.New("no")),
			want: Failure{Title: "Forbidden by the API server"}},
		{name: "conflict", err: apierrors.NewConflict(gr, "demo", errors.New("changed")),
			want: Failure{Title: "Changed on the server meanwhile"}},
		{name: "other", err: errors.New("dial tcp: refused"),
			want: Failure{Title: "The request failed", Message: "dial tcp: refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Problem(tt.err, text)
			if got.Title != tt.want.Title || got.Local != tt.want.Local || got.Line != tt.want.Line ||
				(tt.want.Message != "" && got.Message != tt.want.Message) || got.Message == "" {
				t.Errorf("Problem = %+v, want %+v", got, tt.want)
			}
			if tt.cause != nil {
				if len(got.Causes) != 1 || got.Causes[0].Field != tt.cause.Field || got.Causes[0].Line != tt.cause.Line ||
					(tt.cause.Message != "" && got.Causes[0].Message != tt.cause.Message) {
					t.Errorf("causes = %+v, want %+v", got.Causes, *tt.cause)
				}
			}
		})
	}
}

func TestIgnored(t *testing.T) {
	obj := func(text string) map[string]any {
		o, err := Parse(text, Target{APIVersion: "v1", Kind: "X"})
		if err != nil {
			t.Fatal(err)
		}
		return o.Object
	}
	base := obj("apiVersion: v1\nkind: X\nmetadata:\n  name: nn\n  labels: {a: '1'}\nspec:\n  request: old\n  mode: a\n  default: true\n")
	mine := obj("apiVersion: v1\nkind: X\nmetadata:\n  name: nn\n  labels: {a: '1', app.kubernetes.io/name: web}\n  resourceVersion: '7'\nspec:\n  request: new\n  mode: b\n  extra: x\n")
	// The server took mode, kept its request, dropped extra, re-defaulted default and dropped the new label.
	result := obj("apiVersion: v1\nkind: X\nmetadata:\n  name: nn\n  labels: {a: '1'}\n  resourceVersion: '8'\nspec:\n  request: old\n  mode: b\n  default: true\n")
	got := Ignored(base, mine, result)
	var fields []string
	for _, c := range got {
		fields = append(fields, c.Field+"="+c.Wrote+"/"+c.Kept)
	}
	want := []string{`metadata.labels[app.kubernetes.io/name]="web"/nothing`, `spec.extra="x"/nothing`, `spec.request="new"/"old"`}
	if strings.Join(fields, " ") != strings.Join(want, " ") {
		t.Errorf("Ignored = %v, want %v", fields, want)
	}
	if len(Ignored(base, base, base)) != 0 {
		t.Error("no change reported as ignored")
	}
	p := IgnoredProblem(got, "spec:\n  request: new\n")
	if len(p.Causes) != 3 || p.Line != 1 || p.Causes[2].Line != 2 {
		t.Errorf("IgnoredProblem = %+v", p)
	}
}
