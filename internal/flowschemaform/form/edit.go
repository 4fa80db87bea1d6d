package form

import (
	"slices"
)

// changes nothing. The form is changed in place and returned.
func ApplyOp(f Form, op Op) Form {
	f.Rules = slices.Clone(f.Rules)
	if op.Kind == OpAddRule {
		if len(f.Rules) < MaxRows {
			f.Rules = append(f.Rules, newRule())
		}
		return f
	}
	if op.Rule < 0 || op.Rule >= len(f.Rules) {
		return f
	}
	r := f.Rules[op.Rule]
	switch op.Kind {
	case OpRemoveRule:
		f.Rules = slices.Delete(f.Rules, op.Rule, op.Rule+1)
		return f
	case OpAddSubject:
		if len(r.Subjects) < MaxRows {
			r.Subjects = append(slices.Clone(r.Subjects), Subject{Kind: KindUser})
		}
	case OpRemoveSubject:
		if op.Row < len(r.Subjects) {
			r.Subjects = slices.Delete(slices.Clone(r.Subjects), op.Row, op.Row+1)
		}
	case OpAddResource:
		if len(r.ResourceRules) < MaxRows {
			r.ResourceRules = append(slices.Clone(r.ResourceRules), ResourceRule{})
		}
	case OpRemoveResource:
		if op.Row < len(r.ResourceRules) {
			r.ResourceRules = slices.Delete(slices.Clone(r.ResourceRules), op.Row, op.Row+1)
		}
	case OpAddNonResource:
		if len(r.NonResourceRules) < MaxRows {
			r.NonResourceRules = append(slices.Clone(r.NonResourceRules), NonResourceRule{})
		}
	case OpRemoveNonResource:
		if op.Row < len(r.NonResourceRules) {
			r.NonResourceRules = slices.Delete(slices.Clone(r.NonResourceRules), op.Row, op.Row+1)
		}
	}
	f.Rules[op.Rule] = r
	return f
}

// AddedRowKey is the key of the row an add op made in f (after ApplyOp),
// "" for any other op: the page puts the cursor in it.
func AddedRowKey(f Form, op Op) string {
	switch op.Kind {
	case OpAddRule:
		if n := len(f.Rules); n > 0 {
			return SubjectKey(n-1, 0)
		}
		return ""
	case OpAddSubject, OpAddResource, OpAddNonResource:
	default:
		return ""
	}
	if op.Rule < 0 || op.Rule >= len(f.Rules) {
		return ""
	}
	r := f.Rules[op.Rule]
	switch op.Kind {
	case OpAddSubject:
		return lastRow(SubjectKey, op.Rule, len(r.Subjects))
	case OpAddResource:
		return lastRow(ResourceKey, op.Rule, len(r.ResourceRules))
	}
	return lastRow(NonResourceKey, op.Rule, len(r.NonResourceRules))
}

// lastRow is the key of the last of n rows of rule i ("" for none).
func lastRow(key func(i, j int) string, i, n int) string {
	if n == 0 {
		return ""
	}
	return key(i, n-1)
}
