package edit

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// IgnoredChange is a field the user changed that the API server's answer
// leaves as it was: the server silently keeps its value (a CSR's spec, which
// its update strategy resets; status in an update of the main resource;
// metadata only the server sets).
type IgnoredChange struct {
	Field string // path as in API errors: "spec.request", "metadata.labels[app.kubernetes.io/name]"
	Wrote string // what the user wrote, shortened
	Kept  string // what the server keeps ("" for nothing), shortened
}

// Ignored compares the object the user started from (base), what they sent
// (mine) and what the server stored or would store (result). A field counts
// when mine sets it to something other than base and result still has base's
// value. Fields mine removes are not reported: a default coming back is not an
// ignored change. resourceVersion and managedFields are never reported.
func Ignored(base, mine, result map[string]any) []IgnoredChange {
	b, m, r := leaves(base), leaves(mine), leaves(result)
	var out []IgnoredChange
	for path, mv := range m {
		if path == "metadata.resourceVersion" || strings.HasPrefix(path, "metadata.managedFields") {
			continue
		}
		bv, inBase := b[path]
		rv, inResult := r[path]
		if inBase && reflect.DeepEqual(bv, mv) {
			continue
		}
		if inResult == inBase && (!inResult || reflect.DeepEqual(rv, bv)) {
			out = append(out, IgnoredChange{Field: path, Wrote: short(mv), Kept: keptText(inResult, rv)})
		}
	}
	slices.SortFunc(out, func(a, b IgnoredChange) int { return strings.Compare(a.Field, b.Field) })
	return out
}

// IgnoredProblem is the error the editor shows for ignored changes.
func IgnoredProblem(changes []IgnoredChange, text string) Failure {
	p := Failure{
		Title: "The API server would not store part of your change",
		Message: "It keeps its own value of the fields below: they cannot be changed after creation, or only the server sets them. " +
			"Nothing was written. Undo these changes to apply the rest.",
	}
	at := NewLocator(text)
	for _, c := range changes {
		msg := "you wrote " + c.Wrote + "; the server keeps " + c.Kept
		p.Causes = append(p.Causes, Cause{Field: c.Field, Message: msg, Line: at.Line(c.Field)})
	}
	for _, c := range p.Causes {
		if c.Line > 0 {
			p.Line = c.Line
			break
		}
	}
	return p
}

func keptText(present bool, v any) string {
	if !present {
		return "nothing"
	}
	return short(v)
}

func short(v any) string {
	s := fmt.Sprint(v)
	if str, ok := v.(string); ok {
		s = strconv.Quote(str)
	}
	if len(s) > 48 {
		s = s[:45] + "…"
	}
	return s
}

// leaves flattens a JSON object into field path → scalar (or empty map or list).
func leaves(obj map[string]any) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 && prefix != "" {
				out[prefix] = x
			}
			for k, child := range x {
				walk(joinKey(prefix, k), child)
			}
		case []any:
			if len(x) == 0 {
				out[prefix] = x
			}
			for i, child := range x {
				walk(prefix+"["+strconv.Itoa(i)+"]", child)
			}
		default:
			out[prefix] = x
		}
	}
	walk("", obj)
	return out
}

// joinKey appends a map key to a path, in brackets when it has a dot or a
// bracket (label keys like app.kubernetes.io/name).
func joinKey(prefix, k string) string {
	if strings.ContainsAny(k, ".[]") {
		return prefix + "[" + k + "]"
	}
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}
