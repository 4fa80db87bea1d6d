package form

import "strings"

// CoreGroupToken is how the form writes the core API group (the empty string)
// in a list of API groups.
const CoreGroupToken = `""`

// SplitList splits a typed list on commas and white space, dropping empty
// entries; CoreGroupToken stands for the empty string when core is true.
func SplitList(s string, core bool) []string {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
	if len(fields) == 0 {
		return nil
	}
	out := make([]string, 0, len(fields))
	for _, f := range fields {
		if core && f == CoreGroupToken {
			f = ""
		}
		out = append(out, f)
	}
	return out
}

// JoinList is the inverse of SplitList, for showing a list in the form.
func JoinList(ss []string, core bool) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		if core && s == "" {
			s = CoreGroupToken
		}
		out[i] = s
	}
	return strings.Join(out, ", ")
}

// PriorityLevelName is the priority level the form names: the select's, or
// the typed one when the select says "another".
func PriorityLevelName(f Form) string {
	if f.PriorityLevel == PriorityLevelOther || f.PriorityLevel == "" {
		return f.PriorityTyped
	}
	return f.PriorityLevel
}
