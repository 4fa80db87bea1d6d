// Package managedfields reads an object's managedFields for the auditor: who
// (which field manager) wrote which fields, and which managers a change
// between two observed versions credits. The watch feed (internal/ingest)
// credits its ledger entries with it; an object's history page shows the
// cached object's managers now.
package managedfields

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

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

// Manager is one managedFields entry, readable: who, how, when and the
// fields it owns.
type Manager struct {
	Manager     string
	Operation   string // Apply or Update
	Subresource string
	Time        time.Time // zero when the entry has none
	Fields      []string
}

// Of returns one Manager per managedFields entry of an object, newest first.
func Of(mf []metav1.ManagedFieldsEntry) []Manager {
	out := make([]Manager, 0, len(mf))
	for _, m := range mf {
		e := Manager{Manager: m.Manager, Operation: string(m.Operation), Subresource: m.Subresource}
		if m.Time != nil {
			e.Time = m.Time.UTC()
		}
		if m.FieldsV1 != nil {
			e.Fields = FieldPaths(m.FieldsV1.Raw)
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b Manager) int { return b.Time.Compare(a.Time) })
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

// Credit is what the changed managedFields entries say of a change: the
// managers, operations and subresources (each joined by ", ") and the
// fields they touched, sorted.
func Credit(changed []metav1.ManagedFieldsEntry) Manager {
	var managers, ops, subs []string
	var c Manager
	for _, m := range changed {
		managers = appendNew(managers, m.Manager)
		ops = appendNew(ops, string(m.Operation))
		subs = appendNew(subs, m.Subresource)
		if m.FieldsV1 != nil {
			c.Fields = append(c.Fields, FieldPaths(m.FieldsV1.Raw)...)
		}
	}
	sort.Strings(c.Fields)
	c.Fields = slices.Compact(c.Fields)
	c.Manager, c.Operation, c.Subresource = strings.Join(managers, ", "), strings.Join(ops, ", "), strings.Join(subs, ", ")
	return c
}

func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
