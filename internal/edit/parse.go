// Package edit is the pure logic of the YAML editor: it turns the user's text
// into an object to send (refusing, before anything is sent, what the API
// server must never see), renders objects as editor text, diffs texts for
// display, rebases an edit onto a newer version, maps error field paths to
// lines, and holds the example objects of the "create" pages. No HTTP, no
// client calls.
package edit

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Target is what an editor page edits: the kind (with the served version) and,
// when editing rather than creating, the object's name.
type Target struct {
	APIVersion string // "storage.k8s.io/v1"
	Kind       string // "CSIDriver"
	Name       string // "" when creating
}

// InputError is a problem clusterdesk found in the text itself; nothing was sent.
type InputError struct {
	Title   string
	Message string
	Line    int // 1-based line in the text, 0 when not known
}

func (e *InputError) Error() string { return e.Title + ": " + e.Message }

// Normalize returns text with the line breaks a browser sends (CRLF) made plain
// newlines, so diffs and rebases compare lines, not line endings.
func Normalize(text string) string {
	return strings.ReplaceAll(text, "\r\n", "\n")
}

var (
	yamlLine     = regexp.MustCompile(`line (\d+)`)
	docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)
)

// Parse turns the editor text into the object to send. It refuses, with an
// *InputError, text that is not one YAML object, an object of another apiVersion
// or kind than t, and (when t.Name is set) an object whose metadata.name is not
// t.Name: renaming is a create and a delete, never an update.
func Parse(text string, t Target) (*unstructured.Unstructured, error) {
	text = Normalize(text)
	if strings.TrimSpace(text) == "" {
		return nil, &InputError{Title: "Nothing to send", Message: "The editor is empty. Write the object as YAML."}
	}
	if n := documents(text); n > 1 {
		return nil, &InputError{Title: "More than one object", Message: fmt.Sprintf(
			"The text holds %d YAML documents separated by ---; this page sends exactly one %s.", n, t.Kind)}
	}
	// Strict: a key given twice would otherwise silently keep the last value.
	j, err := yaml.YAMLToJSONStrict([]byte(text))
	if err != nil {
		return nil, yamlError(err, text)
	}
	if !strings.HasPrefix(strings.TrimSpace(string(j)), "{") {
		return nil, &InputError{Title: "Not an object", Message: fmt.Sprintf(
			"The YAML must be one object: a mapping with apiVersion, kind, metadata and the fields of a %s.", t.Kind)}
	}
	head, err := readHead(j)
	if err != nil {
		return nil, &InputError{Title: "Wrong type", Message: "apiVersion, kind, metadata.name and metadata.generateName must be strings " +
			"(YAML reads unquoted yes, no, on, off, y, n, true, false and numbers as other types: quote them): " + err.Error()}
	}
	if head.APIVersion != t.APIVersion || head.Kind != t.Kind {
		return nil, &InputError{
			Title: "Wrong kind or apiVersion",
			Message: fmt.Sprintf("This page edits %s %s, but the YAML says apiVersion %q, kind %q. Change them back; to write another kind, use its own page.",
				t.APIVersion, t.Kind, head.APIVersion, head.Kind),
			Line: firstLine(text, "apiVersion", "kind", head.APIVersion != t.APIVersion),
		}
	}
	switch {
	case t.Name != "" && head.Name != t.Name:
		return nil, &InputError{
			Title: "Name differs from the page",
			Message: fmt.Sprintf("This page edits %q, but the YAML names %q. An update cannot rename an object: to make a copy under another name, use the create page.",
				t.Name, head.Name),
			Line: Locate(text, "metadata.name"),
		}
	case t.Name == "" && head.Name == "" && head.GenerateName == "":
		return nil, &InputError{Title: "No name", Message: "Give the new object a name in metadata.name.", Line: Locate(text, "metadata")}
	}
	obj := &unstructured.Unstructured{}
	// UnmarshalJSON keeps integers as int64 (a map[string]any decode would make
	// them float64 and round large ones).
	if err := obj.UnmarshalJSON(j); err != nil {
		return nil, &InputError{Title: "Not an object", Message: err.Error()}
	}
	return obj, nil
}

// objectHead is what Parse checks before anything else.
type objectHead struct{ APIVersion, Kind, Name, GenerateName string }

// readHead reads apiVersion, kind, metadata.name and metadata.generateName
// spelled exactly so, as the API server reads them. Not a struct: encoding/json
// matches struct fields regardless of case, so "ApiVersion" or "metAdAtA" would
// pass the checks while the object sent has no apiVersion or metadata at all
// (found by FuzzParse).
func readHead(j []byte) (objectHead, error) {
	var h objectHead
	var top map[string]json.RawMessage
	if err := json.Unmarshal(j, &top); err != nil {
		return h, err
	}
	var meta map[string]json.RawMessage
	if raw, ok := top["metadata"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return h, fmt.Errorf("metadata must be a mapping: %w", err)
		}
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		into *string
	}{
		{"apiVersion", top["apiVersion"], &h.APIVersion}, {"kind", top["kind"], &h.Kind},
		{"metadata.name", meta["name"], &h.Name}, {"metadata.generateName", meta["generateName"], &h.GenerateName},
	} {
		if f.raw == nil {
			continue
		}
		if err := json.Unmarshal(f.raw, f.into); err != nil {
			return h, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return h, nil
}

// documents counts the non-empty YAML documents in text.
func documents(text string) int {
	n := 0
	for _, doc := range docSeparator.Split(text, -1) {
		for _, l := range strings.Split(doc, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				n++
				break
			}
		}
	}
	return n
}

// yamlError makes the YAML parser's message readable and finds its line. At
// the end of the text the parser can name the line after the last one (an
// unfinished mapping); the editor marks the last line instead.
func yamlError(err error, text string) *InputError {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.Join(strings.Fields(msg), " ")
	e := &InputError{Title: "Invalid YAML", Message: msg}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Line = min(e.Line, strings.Count(text, "\n")+1)
	}
	return e
}

// firstLine is the line of the top-level key a (when preferA) or b.
func firstLine(text, a, b string, preferA bool) int {
	if preferA {
		return Locate(text, a)
	}
	return Locate(text, b)
}

// Fields parses text that clusterdesk rendered itself (the base of an edit)
// into its JSON fields, without the checks of Parse.
func Fields(text string) (map[string]any, error) {
	j, err := yaml.YAMLToJSON([]byte(Normalize(text)))
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(j); err != nil {
		return nil, err
	}
	return obj.Object, nil
}
