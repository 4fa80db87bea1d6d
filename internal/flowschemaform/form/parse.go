package form

import (
	"net/url"
	"slices"
	"sort"
	"strings"
)

// resource rule row, and the defaults kubectl users start from.
func New() Form {
	return Form{Precedence: "1000", PriorityLevel: "workload-low", Rules: []Rule{newRule()}}
}

func newRule() Rule {
	return Rule{
		Subjects:      []Subject{{Kind: KindUser}},
		ResourceRules: []ResourceRule{{}},
	}
}

// ruleAcc collects one rule's rows by their posted index.
type ruleAcc struct {
	subjects    map[int]*Subject
	resources   map[int]*ResourceRule
	nonresource map[int]*NonResourceRule
}

// Parse decodes the posted form and the op of the button that
// sent it. Rows are kept in the order of their indices, renumbered densely;
// unknown keys are ignored. Values are kept as typed (trimmed), so the form
// can be shown again exactly.
func Parse(v url.Values) (Form, Op) {
	f := Form{
		Name:            strings.TrimSpace(v.Get(FieldName)),
		ResourceVersion: v.Get(FieldResourceVersion),
		Base:            v.Get(FieldBase),
		Precedence:      strings.TrimSpace(v.Get(FieldPrecedence)),
		PriorityLevel:   strings.TrimSpace(v.Get(FieldPriorityLevel)),
		PriorityTyped:   strings.TrimSpace(v.Get(FieldPriorityTyped)),
		Distinguisher:   v.Get(FieldDistinguisher),
	}
	if f.Distinguisher != ByUser && f.Distinguisher != ByNamespace {
		f.Distinguisher = ""
	}
	rules := map[int]*ruleAcc{}
	for key, vals := range v {
		rest, ok := strings.CutPrefix(key, rulePrefix)
		if !ok {
			continue
		}
		idx, rest, ok := strings.Cut(rest, ".")
		if !ok {
			continue
		}
		ri, ok := formIndex(idx)
		if !ok {
			continue
		}
		r := rules[ri]
		if r == nil {
			if len(rules) >= MaxRows {
				continue
			}
			r = &ruleAcc{subjects: map[int]*Subject{}, resources: map[int]*ResourceRule{}, nonresource: map[int]*NonResourceRule{}}
			rules[ri] = r
		}
		if rest == RowRule {
			continue
		}
		row, field, ok := strings.Cut(rest, ".")
		if !ok {
			continue
		}
		prefix := strings.TrimRight(row, "0123456789")
		ji, ok := formIndex(row[len(prefix):])
		if !ok {
			continue
		}
		first := strings.TrimSpace(firstOf(vals))
		switch prefix {
		case subjectRow:
			s := rowOf(r.subjects, ji, func() *Subject { return &Subject{Kind: KindUser} })
			if s == nil {
				continue
			}
			switch field {
			case RowKind:
				if slices.Contains(SubjectKinds, first) {
					s.Kind = first
				}
			case RowName:
				s.Name = first
			case RowNamespace:
				s.Namespace = first
			}
		case resourceRow:
			rr := rowOf(r.resources, ji, func() *ResourceRule { return &ResourceRule{} })
			if rr == nil {
				continue
			}
			switch field {
			case RowVerbs:
				rr.Verbs = formVerbs(vals)
			case RowAPIGroups:
				rr.APIGroups = first
			case RowResources:
				rr.Resources = first
			case RowClusterScope:
				rr.ClusterScope = first != ""
			case RowNamespaces:
				rr.Namespaces = first
			}
		case nonResourceRow:
			nr := rowOf(r.nonresource, ji, func() *NonResourceRule { return &NonResourceRule{} })
			if nr == nil {
				continue
			}
			switch field {
			case RowVerbs:
				nr.Verbs = formVerbs(vals)
			case RowURLs:
				nr.URLs = first
			}
		}
	}
	for _, ri := range sortedKeys(rules) {
		r := rules[ri]
		var rule Rule
		for _, j := range sortedKeys(r.subjects) {
			rule.Subjects = append(rule.Subjects, *r.subjects[j])
		}
		for _, j := range sortedKeys(r.resources) {
			rule.ResourceRules = append(rule.ResourceRules, *r.resources[j])
		}
		for _, j := range sortedKeys(r.nonresource) {
			rule.NonResourceRules = append(rule.NonResourceRules, *r.nonresource[j])
		}
		f.Rules = append(f.Rules, rule)
	}
	return f, ParseOp(v.Get(FieldOp))
}

func firstOf(vals []string) string {
	if len(vals) == 0 {
		return ""
	}
	return vals[0]
}

// rowOf returns row j of m, making it when there is room.
func rowOf[T any](m map[int]*T, j int, mk func() *T) *T {
	if r, ok := m[j]; ok {
		return r
	}
	if len(m) >= MaxRows {
		return nil
	}
	r := mk()
	m[j] = r
	return r
}

func sortedKeys[T any](m map[int]T) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

// formVerbs keeps the checked verbs the form offers, in Verbs order.
func formVerbs(vals []string) []string {
	var out []string
	for _, v := range Verbs {
		if slices.Contains(vals, v) {
			out = append(out, v)
		}
	}
	return out
}

// ApplyOp adds or removes the row op names; an index out of range

// Values is what the form posts for f (without the op and the
// CSRF token): the inverse of Parse. The tests post with it;
// views/pages/apf_form.templ must render the same names (handlers/apf_form_test.go
// checks that it does).
func Values(f Form) url.Values {
	v := url.Values{}
	set := func(k, val string) { v.Set(k, val) }
	set(FieldName, f.Name)
	if f.ResourceVersion != "" {
		set(FieldResourceVersion, f.ResourceVersion)
	}
	if f.Base != "" {
		set(FieldBase, f.Base)
	}
	set(FieldPrecedence, f.Precedence)
	set(FieldPriorityLevel, f.PriorityLevel)
	set(FieldPriorityTyped, f.PriorityTyped)
	set(FieldDistinguisher, f.Distinguisher)
	for i, r := range f.Rules {
		set(Key(RuleKey(i), RowRule), "1")
		for j, s := range r.Subjects {
			k := SubjectKey(i, j)
			set(Key(k, RowKind), s.Kind)
			set(Key(k, RowNamespace), s.Namespace)
			set(Key(k, RowName), s.Name)
		}
		for j, rr := range r.ResourceRules {
			k := ResourceKey(i, j)
			v[Key(k, RowVerbs)] = slices.Clone(rr.Verbs)
			set(Key(k, RowAPIGroups), rr.APIGroups)
			set(Key(k, RowResources), rr.Resources)
			set(Key(k, RowNamespaces), rr.Namespaces)
			if rr.ClusterScope {
				set(Key(k, RowClusterScope), "1")
			}
		}
		for j, nr := range r.NonResourceRules {
			k := NonResourceKey(i, j)
			v[Key(k, RowVerbs)] = slices.Clone(nr.Verbs)
			set(Key(k, RowURLs), nr.URLs)
		}
	}
	return v
}
