package form

import (
	"strconv"
	"strings"
)

// OpKind is what a submit button of the FlowSchema form asks for.
type OpKind string

const (
	OpNone              OpKind = ""
	OpPreview           OpKind = "preview"
	OpSave              OpKind = "save"
	OpRebase            OpKind = "rebase" // after a conflict: keep the values, start from the current version
	OpAddRule           OpKind = "add-rule"
	OpRemoveRule        OpKind = "remove-rule"
	OpAddSubject        OpKind = "add-subject"
	OpRemoveSubject     OpKind = "remove-subject"
	OpAddResource       OpKind = "add-resource"
	OpRemoveResource    OpKind = "remove-resource"
	OpAddNonResource    OpKind = "add-nonresource"
	OpRemoveNonResource OpKind = "remove-nonresource"
)

// Op is a parsed op: "add-subject:0" adds a subject to rule 0,
// "remove-resource:1:2" removes resource rule 2 of rule 1.
type Op struct {
	Kind      OpKind
	Rule, Row int
}

// Edits reports whether the op only changes the form's rows (nothing is sent).
func (op Op) Edits() bool {
	return op.Kind != OpNone && op.Kind != OpPreview && op.Kind != OpSave && op.Kind != OpRebase
}

// OpValue is the value of the submit button for op (the inverse of ParseOp).
func OpValue(kind OpKind, idx ...int) string {
	s := string(kind)
	for _, i := range idx {
		s += ":" + strconv.Itoa(i)
	}
	return s
}

// ParseOp reads a submit button's value; anything unknown is OpNone.
func ParseOp(s string) Op {
	parts := strings.Split(s, ":")
	op := Op{Kind: OpKind(parts[0])}
	want := 0
	switch op.Kind {
	case OpPreview, OpSave, OpRebase, OpAddRule:
	case OpRemoveRule, OpAddSubject, OpAddResource, OpAddNonResource:
		want = 1
	case OpRemoveSubject, OpRemoveResource, OpRemoveNonResource:
		want = 2
	default:
		return Op{}
	}
	if len(parts)-1 != want {
		return Op{}
	}
	nums := make([]int, want)
	for i := range want {
		n, ok := formIndex(parts[i+1])
		if !ok {
			return Op{}
		}
		nums[i] = n
	}
	if want > 0 {
		op.Rule = nums[0]
	}
	if want > 1 {
		op.Row = nums[1]
	}
	return op
}

// formIndex parses a small non-negative decimal index.
func formIndex(s string) (int, bool) {
	if s == "" || len(s) > 3 || (len(s) > 1 && s[0] == '0') || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}

// New is the create form: one rule with one subject row and one
