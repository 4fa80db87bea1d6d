package activity

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fieldDepth is how deep field paths go: "spec.versions[name=v1].schema" says
// enough; the full set is in the object's managedFields.
const fieldDepth = 4

// maxFields bounds the paths listed per entry.
const maxFields = 25

// FieldPaths summarizes a managedFields entry's fieldsV1 set as readable paths,
// sorted: "f:" fields become ".name", "k:" keys "[key=value]", "v:" set values
// "[value]", "i:" indexes "[n]". Paths stop at fieldDepth segments. Past
// maxFields the list ends with "… N more". Malformed JSON gives nil.
func FieldPaths(raw []byte) []string {
	if len(raw) == 0 {
		return nil
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil
	}
	var out []string
	walkFields("", root, 0, &out)
	sort.Strings(out)
	out = slices.Compact(out)
	if len(out) > maxFields {
		more := len(out) - maxFields
		out = append(out[:maxFields], "… "+strconv.Itoa(more)+" more")
	}
	return out
}

func walkFields(prefix string, node map[string]any, depth int, out *[]string) {
	for key, child := range node {
		if key == "." {
			continue
		}
		path := prefix + segment(key, prefix == "")
		cm, _ := child.(map[string]any)
		if depth+1 >= fieldDepth || !hasChildren(cm) {
			*out = append(*out, path)
			continue
		}
		walkFields(path, cm, depth+1, out)
	}
}

func hasChildren(m map[string]any) bool {
	for k := range m {
		if k != "." {
			return true
		}
	}
	return false
}

// segment renders one fieldsV1 key.
func segment(key string, first bool) string {
	if len(key) < 2 || key[1] != ':' {
		return "." + key
	}
	body := key[2:]
	switch key[0] {
	case 'f':
		if first {
			return body
		}
		return "." + body
	case 'k':
		var kv map[string]any
		if err := json.Unmarshal([]byte(body), &kv); err != nil {
			return "[" + body + "]"
		}
		parts := make([]string, 0, len(kv))
		for k, v := range kv {
			parts = append(parts, k+"="+scalar(v))
		}
		sort.Strings(parts)
		return "[" + strings.Join(parts, ",") + "]"
	case 'v':
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			return "[" + body + "]"
		}
		return "[" + scalar(v) + "]"
	case 'i':
		return "[" + body + "]"
	}
	return "." + key
}

func scalar(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// FromManagedFields returns one entry per managedFields entry of an object.
func FromManagedFields(kind, name, rv string, mf []metav1.ManagedFieldsEntry) []Entry {
	out := make([]Entry, 0, len(mf))
	for _, m := range mf {
		e := Entry{Kind: kind, Name: name, Source: SourceManagedFields, Op: strings.ToLower(string(m.Operation)),
			Manager: m.Manager, Operation: string(m.Operation), Subresource: m.Subresource, RV: rv}
		if m.Time != nil {
			e.Time = m.Time.UTC()
		}
		if m.FieldsV1 != nil {
			e.Fields = FieldPaths(m.FieldsV1.Raw)
		}
		out = append(out, e)
	}
	return out
}

// Changed returns the managedFields entries of after that are new or carry a
// newer time (or other fields) than the same manager's entry in before: the
// managers credited with the change between two observed versions. The API
// server records times to the second, so two writes by different managers
// within a second can both be credited.
func Changed(before, after []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	type key struct{ manager, operation, subresource string }
	prev := map[key]metav1.ManagedFieldsEntry{}
	for _, m := range before {
		prev[key{m.Manager, string(m.Operation), m.Subresource}] = m
	}
	var out []metav1.ManagedFieldsEntry
	for _, m := range after {
		p, ok := prev[key{m.Manager, string(m.Operation), m.Subresource}]
		if !ok || !sameTime(p.Time, m.Time) || !sameFields(p.FieldsV1, m.FieldsV1) {
			out = append(out, m)
		}
	}
	return out
}

func sameTime(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b)
}

func sameFields(a, b *metav1.FieldsV1) bool {
	if a == nil || b == nil {
		return a == b
	}
	return string(a.Raw) == string(b.Raw)
}

// credit fills an entry's manager, operation, subresource and fields from the
// changed managedFields entries.
func credit(e *Entry, changed []metav1.ManagedFieldsEntry) {
	var managers, ops, subs []string
	for _, m := range changed {
		managers = appendNew(managers, m.Manager)
		ops = appendNew(ops, string(m.Operation))
		subs = appendNew(subs, m.Subresource)
		if m.FieldsV1 != nil {
			e.Fields = append(e.Fields, FieldPaths(m.FieldsV1.Raw)...)
		}
	}
	sort.Strings(e.Fields)
	e.Fields = slices.Compact(e.Fields)
	e.Manager, e.Operation, e.Subresource = strings.Join(managers, ", "), strings.Join(ops, ", "), strings.Join(subs, ", ")
}

func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
