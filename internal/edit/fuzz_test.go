//go:build !race

// The fuzz targets run on one goroutine: scripts/go-test-unit.sh runs their
// seed corpora in its pass without the race detector (under it, the seeds'
// 118 real-world manifests took 66 s of CI's unit layer), and fuzz-short
// fuzzes them (scripts/fuzz.sh, never with -race).

package edit

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// fuzzFixturesDir is the shared real-world manifests beside the repository.
const fuzzFixturesDir = "../../../shared/fixtures/real"

// fuzzSeedFileMax skips the large CRDs as seeds (up to 2.9 MiB): a fuzzer
// mutating them makes a handful of executions a second, and measuring their
// coverage at the start would use up a short fuzz run. 118 of the 181
// fixtures are smaller.
const fuzzSeedFileMax = 64 << 10

// fuzzFixtures returns the text of every real-world manifest up to
// fuzzSeedFileMax, with the target an editor page for it would have.
func fuzzFixtures(f *testing.F) (texts []string, targets []Target) {
	files, err := filepath.Glob(filepath.Join(fuzzFixturesDir, "*", "*.yaml"))
	if err != nil || len(files) < 100 {
		f.Fatalf("real-world fixtures missing in %s (is ../shared beside the repository?): %d files, %v", fuzzFixturesDir, len(files), err)
	}
	slices.Sort(files)
	for _, file := range files {
		if st, err := os.Stat(file); err != nil || st.Size() > fuzzSeedFileMax {
			continue
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var head unstructured.Unstructured
		if err := yaml.Unmarshal(raw, &head.Object); err != nil {
			f.Fatalf("%s: %v", file, err)
		}
		texts = append(texts, string(raw))
		targets = append(targets, Target{APIVersion: head.GetAPIVersion(), Kind: head.GetKind(), Name: head.GetName()})
	}
	if len(texts) < 80 {
		f.Fatalf("only %d fixtures small enough to seed with", len(texts))
	}
	return texts, targets
}

// FuzzParse feeds arbitrary editor text (and page targets) to Parse. It must
// answer every text with an object or an *InputError, never panic or hang;
// an object it accepts is of the page's kind and name, and survives being
// rendered as editor text (Text) and parsed again unchanged. Locate and
// Fields must cope with any text and field path.
func FuzzParse(f *testing.F) {
	texts, targets := fuzzFixtures(f)
	for i, text := range texts {
		t := targets[i]
		f.Add(text, t.APIVersion, t.Kind, t.Name, "metadata.name")
		if t.Kind != "CustomResourceDefinition" {
			// The create page (no name), and Windows line breaks from a textarea.
			f.Add(strings.ReplaceAll(text, "\n", "\r\n"), t.APIVersion, t.Kind, "", "spec.rules[0]")
		}
	}
	for kind, apiVersion := range map[string]string{
		"FlowSchema": "flowcontrol.apiserver.k8s.io/v1", "CSIDriver": "storage.k8s.io/v1",
		"ValidatingWebhookConfiguration": "admissionregistration.k8s.io/v1",
	} {
		if text, ok, err := Example(kind, apiVersion); ok && err == nil {
			f.Add(text, apiVersion, kind, "", "spec")
		}
	}
	hostile := []string{
		// Alias expansion ("billion laughs"): must be refused, not expanded.
		"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
			"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
		"apiVersion: v1\nkind: X\nmetadata: {name: a}\n<<: {apiVersion: v2}\n",
		"apiVersion: v1\nkind: X\nmetadata:\n  name: !!binary aGVsbG8=\n",
		"apiVersion: v1\nkind: X\nmetadata: {name: a}\nspec: {n: 9007199254740993, f: 1e400, g: .nan, h: 0x1F}\n",
		"{\"apiVersion\": \"v1\", \"kind\": \"X\", \"metadata\": {\"name\": \"a\"}, \"spec\": [1, {\"\": null}]}",
		"---\n---\n# only comments\n---\n",
		"apiVersion: v1\nkind: X\nmetadata: {name: a}\n...\nkind: Y\n",
		"\ufeffapiVersion: v1\nkind: X\nmetadata: {name: a}\n",
		"apiVersion: v1\nkind: X\nmetadata: {name: a, name: b}\n",
		"? [complex, key]\n: value\n",
	}
	for _, h := range hostile {
		f.Add(h, "v1", "X", "a", "spec.n")
	}

	f.Fuzz(func(t *testing.T, text, apiVersion, kind, name, path string) {
		target := Target{APIVersion: apiVersion, Kind: kind, Name: name}
		lines := strings.Count(text, "\n") + strings.Count(text, "\r") + 1
		for _, p := range []string{path, "metadata.name", "apiVersion"} {
			if l := Locate(text, p); l < 0 || l > lines {
				t.Fatalf("Locate(%q) = %d, outside the text's %d lines", p, l, lines)
			}
		}
		_, _ = Fields(text)

		obj, err := Parse(text, target)
		if err != nil {
			var in *InputError
			if !errors.As(err, &in) {
				t.Fatalf("Parse failed with %T %v, want an *InputError", err, err)
			}
			if in.Title == "" || in.Message == "" || in.Line < 0 || in.Line > lines {
				t.Fatalf("malformed InputError %+v for a text of %d lines", in, lines)
			}
			return
		}
		if obj.GetAPIVersion() != apiVersion || obj.GetKind() != kind || (name != "" && obj.GetName() != name) {
			t.Fatalf("Parse accepted %s %s %q for the page of %+v", obj.GetAPIVersion(), obj.GetKind(), obj.GetName(), target)
		}
		rendered, err := Text(obj, true)
		if err != nil {
			t.Fatalf("Text of an accepted object: %v", err)
		}
		again, err := Parse(rendered, target)
		if err != nil {
			t.Fatalf("the editor's own text of an accepted object is refused: %v\n%s", err, rendered)
		}
		want := obj.DeepCopy()
		unstructured.RemoveNestedField(want.Object, "metadata", "managedFields")
		unstructured.RemoveNestedField(want.Object, "metadata", "resourceVersion")
		if !reflect.DeepEqual(again.Object, want.Object) {
			t.Fatalf("the object changed going through its editor text:\nparsed   %#v\nreparsed %#v\ntext:\n%s", want.Object, again.Object, rendered)
		}
	})
}

// FuzzBase checks the hidden "starting version" form field: anything a
// browser sends back decodes or fails cleanly, and what EncodeBase wrote
// comes back byte for byte.
func FuzzBase(f *testing.F) {
	f.Add("apiVersion: v1\nkind: X\n", EncodeBase("apiVersion: v1\nkind: X\n"))
	f.Add("", "")
	f.Add("x", "H4sIAAAAAAAA")
	f.Add("\x00\xff", "!!not base64!!")
	f.Fuzz(func(t *testing.T, text, field string) {
		if got, err := DecodeBase(EncodeBase(text)); err != nil || got != text {
			t.Fatalf("DecodeBase(EncodeBase(%q)) = %q, %v", text, got, err)
		}
		if out, err := DecodeBase(field); err == nil && len(out) > MaxText {
			t.Fatalf("DecodeBase returned %d bytes, over its bound %d", len(out), MaxText)
		}
	})
}
