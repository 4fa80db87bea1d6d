package present

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/clusterdesk/clusterdesk/views/model"
)

// The FlowSchema form's field names. A rule's fields are prefixed "r<i>.", a
// subject's "r<i>.s<j>.", a resource rule's "r<i>.rr<j>." and a non-resource
// rule's "r<i>.nr<j>."; the same keys name the errors and hints shown beside
// each field. A rule posts "r<i>.rule" so that a rule without rows survives.
const (
	FormName          = "name"
	FormPrecedence    = "precedence"
	FormPriorityLevel = "prioritylevel"
	FormPriorityTyped = "prioritylevel-typed"
	FormDistinguisher = "distinguisher"
	FormOpField       = "op"
)

// formMaxRows bounds every list the form decodes (rules, and rows per rule):
// the API server has no such limit, but a form with more is not one a person
// filled in, and the decoder must not let a posted index size its memory.
const formMaxRows = 64

// FormVerbs are the verbs a FlowSchema rule accepts (the API server's
// supportedVerbs), "*" first.
var FormVerbs = []string{"*", "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "proxy"}

// SubjectKinds are the kinds of subject a rule may name.
var SubjectKinds = []string{string(flowcontrolv1.SubjectKindUser), string(flowcontrolv1.SubjectKindGroup), string(flowcontrolv1.SubjectKindServiceAccount)}

// FormOpKind is what a submit button of the FlowSchema form asks for.
type FormOpKind string

const (
	OpNone              FormOpKind = ""
	OpPreview           FormOpKind = "preview"
	OpSave              FormOpKind = "save"
	OpRebase            FormOpKind = "rebase" // after a conflict: keep the values, start from the current version
	OpAddRule           FormOpKind = "add-rule"
	OpRemoveRule        FormOpKind = "remove-rule"
	OpAddSubject        FormOpKind = "add-subject"
	OpRemoveSubject     FormOpKind = "remove-subject"
	OpAddResource       FormOpKind = "add-resource"
	OpRemoveResource    FormOpKind = "remove-resource"
	OpAddNonResource    FormOpKind = "add-nonresource"
	OpRemoveNonResource FormOpKind = "remove-nonresource"
)

// FormOp is a parsed op: "add-subject:0" adds a subject to rule 0,
// "remove-resource:1:2" removes resource rule 2 of rule 1.
type FormOp struct {
	Kind      FormOpKind
	Rule, Row int
}

// Edits reports whether the op only changes the form's rows (nothing is sent).
func (op FormOp) Edits() bool {
	return op.Kind != OpNone && op.Kind != OpPreview && op.Kind != OpSave && op.Kind != OpRebase
}

// OpValue is the value of the submit button for op (the inverse of ParseFormOp).
func OpValue(kind FormOpKind, idx ...int) string {
	s := string(kind)
	for _, i := range idx {
		s += ":" + strconv.Itoa(i)
	}
	return s
}

// ParseFormOp reads a submit button's value; anything unknown is OpNone.
func ParseFormOp(s string) FormOp {
	parts := strings.Split(s, ":")
	op := FormOp{Kind: FormOpKind(parts[0])}
	want := 0
	switch op.Kind {
	case OpPreview, OpSave, OpRebase, OpAddRule:
	case OpRemoveRule, OpAddSubject, OpAddResource, OpAddNonResource:
		want = 1
	case OpRemoveSubject, OpRemoveResource, OpRemoveNonResource:
		want = 2
	default:
		return FormOp{}
	}
	if len(parts)-1 != want {
		return FormOp{}
	}
	nums := make([]int, want)
	for i := range want {
		n, ok := formIndex(parts[i+1])
		if !ok {
			return FormOp{}
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

// NewFlowSchemaForm is the create form: one rule with one subject row and one
// resource rule row, and the defaults kubectl users start from.
func NewFlowSchemaForm() model.FlowSchemaForm {
	return model.FlowSchemaForm{Precedence: "1000", PriorityLevel: "workload-low", Rules: []model.FormRule{newRule()}}
}

func newRule() model.FormRule {
	return model.FormRule{
		Subjects:      []model.FormSubject{{Kind: string(flowcontrolv1.SubjectKindUser)}},
		ResourceRules: []model.FormResourceRule{{}},
	}
}

// ruleAcc collects one rule's rows by their posted index.
type ruleAcc struct {
	subjects    map[int]*model.FormSubject
	resources   map[int]*model.FormResourceRule
	nonresource map[int]*model.FormNonResourceRule
}

// ParseFlowSchemaForm decodes the posted form and the op of the button that
// sent it. Rows are kept in the order of their indices, renumbered densely;
// unknown keys are ignored. Values are kept as typed (trimmed), so the form
// can be shown again exactly.
func ParseFlowSchemaForm(v url.Values) (model.FlowSchemaForm, FormOp) {
	f := model.FlowSchemaForm{
		Name:            strings.TrimSpace(v.Get(FormName)),
		ResourceVersion: v.Get("resourceVersion"),
		Base:            v.Get("base"),
		Precedence:      strings.TrimSpace(v.Get(FormPrecedence)),
		PriorityLevel:   strings.TrimSpace(v.Get(FormPriorityLevel)),
		PriorityTyped:   strings.TrimSpace(v.Get(FormPriorityTyped)),
		Distinguisher:   v.Get(FormDistinguisher),
	}
	if f.Distinguisher != string(flowcontrolv1.FlowDistinguisherMethodByUserType) && f.Distinguisher != string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType) {
		f.Distinguisher = ""
	}
	rules := map[int]*ruleAcc{}
	for key, vals := range v {
		rest, ok := strings.CutPrefix(key, "r")
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
			if len(rules) >= formMaxRows {
				continue
			}
			r = &ruleAcc{subjects: map[int]*model.FormSubject{}, resources: map[int]*model.FormResourceRule{}, nonresource: map[int]*model.FormNonResourceRule{}}
			rules[ri] = r
		}
		if rest == "rule" {
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
		case "s":
			s := rowOf(r.subjects, ji, func() *model.FormSubject { return &model.FormSubject{Kind: string(flowcontrolv1.SubjectKindUser)} })
			if s == nil {
				continue
			}
			switch field {
			case "kind":
				if slices.Contains(SubjectKinds, first) {
					s.Kind = first
				}
			case "name":
				s.Name = first
			case "namespace":
				s.Namespace = first
			}
		case "rr":
			rr := rowOf(r.resources, ji, func() *model.FormResourceRule { return &model.FormResourceRule{} })
			if rr == nil {
				continue
			}
			switch field {
			case "verbs":
				rr.Verbs = formVerbs(vals)
			case "apigroups":
				rr.APIGroups = first
			case "resources":
				rr.Resources = first
			case "clusterscope":
				rr.ClusterScope = first != ""
			case "namespaces":
				rr.Namespaces = first
			}
		case "nr":
			nr := rowOf(r.nonresource, ji, func() *model.FormNonResourceRule { return &model.FormNonResourceRule{} })
			if nr == nil {
				continue
			}
			switch field {
			case "verbs":
				nr.Verbs = formVerbs(vals)
			case "urls":
				nr.URLs = first
			}
		}
	}
	for _, ri := range sortedKeys(rules) {
		r := rules[ri]
		var rule model.FormRule
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
	return f, ParseFormOp(v.Get(FormOpField))
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
	if len(m) >= formMaxRows {
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

// formVerbs keeps the checked verbs the form offers, in FormVerbs order.
func formVerbs(vals []string) []string {
	var out []string
	for _, v := range FormVerbs {
		if slices.Contains(vals, v) {
			out = append(out, v)
		}
	}
	return out
}

// ApplyFormOp adds or removes the row op names; an index out of range
// changes nothing. The form is changed in place and returned.
func ApplyFormOp(f model.FlowSchemaForm, op FormOp) model.FlowSchemaForm {
	f.Rules = slices.Clone(f.Rules)
	if op.Kind == OpAddRule {
		if len(f.Rules) < formMaxRows {
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
		if len(r.Subjects) < formMaxRows {
			r.Subjects = append(slices.Clone(r.Subjects), model.FormSubject{Kind: string(flowcontrolv1.SubjectKindUser)})
		}
	case OpRemoveSubject:
		if op.Row < len(r.Subjects) {
			r.Subjects = slices.Delete(slices.Clone(r.Subjects), op.Row, op.Row+1)
		}
	case OpAddResource:
		if len(r.ResourceRules) < formMaxRows {
			r.ResourceRules = append(slices.Clone(r.ResourceRules), model.FormResourceRule{})
		}
	case OpRemoveResource:
		if op.Row < len(r.ResourceRules) {
			r.ResourceRules = slices.Delete(slices.Clone(r.ResourceRules), op.Row, op.Row+1)
		}
	case OpAddNonResource:
		if len(r.NonResourceRules) < formMaxRows {
			r.NonResourceRules = append(slices.Clone(r.NonResourceRules), model.FormNonResourceRule{})
		}
	case OpRemoveNonResource:
		if op.Row < len(r.NonResourceRules) {
			r.NonResourceRules = slices.Delete(slices.Clone(r.NonResourceRules), op.Row, op.Row+1)
		}
	}
	f.Rules[op.Rule] = r
	return f
}

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
func PriorityLevelName(f model.FlowSchemaForm) string {
	if f.PriorityLevel == model.PriorityLevelOther || f.PriorityLevel == "" {
		return f.PriorityTyped
	}
	return f.PriorityLevel
}

// FlowSchemaSpec turns the form into the spec it describes, or local errors
// by field key when it cannot be expressed (a precedence that is not a
// number). Everything else is sent as typed: the API server judges it.
func FlowSchemaSpec(f model.FlowSchemaForm) (flowcontrolv1.FlowSchemaSpec, map[string][]string) {
	errs := map[string][]string{}
	var spec flowcontrolv1.FlowSchemaSpec
	prec, err := strconv.ParseInt(f.Precedence, 10, 32)
	switch {
	case f.Precedence == "":
		errs[FormPrecedence] = []string{"Give the matching precedence, a whole number from 1 to 10000."}
	case err != nil:
		errs[FormPrecedence] = []string{fmt.Sprintf("%q is not a whole number; the matching precedence is one from 1 to 10000.", f.Precedence)}
	default:
		spec.MatchingPrecedence = int32(prec)
	}
	spec.PriorityLevelConfiguration.Name = PriorityLevelName(f)
	if f.Distinguisher != "" {
		spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodType(f.Distinguisher)}
	}
	for _, r := range f.Rules {
		rule := flowcontrolv1.PolicyRulesWithSubjects{}
		for _, s := range r.Subjects {
			rule.Subjects = append(rule.Subjects, subjectOf(s))
		}
		for _, rr := range r.ResourceRules {
			rule.ResourceRules = append(rule.ResourceRules, flowcontrolv1.ResourcePolicyRule{
				Verbs:        slices.Clone(rr.Verbs),
				APIGroups:    SplitList(rr.APIGroups, true),
				Resources:    SplitList(rr.Resources, false),
				ClusterScope: rr.ClusterScope,
				Namespaces:   SplitList(rr.Namespaces, false),
			})
		}
		for _, nr := range r.NonResourceRules {
			rule.NonResourceRules = append(rule.NonResourceRules, flowcontrolv1.NonResourcePolicyRule{
				Verbs:           slices.Clone(nr.Verbs),
				NonResourceURLs: SplitList(nr.URLs, false),
			})
		}
		spec.Rules = append(spec.Rules, rule)
	}
	if len(errs) == 0 {
		errs = nil
	}
	return spec, errs
}

func subjectOf(s model.FormSubject) flowcontrolv1.Subject {
	switch flowcontrolv1.SubjectKind(s.Kind) {
	case flowcontrolv1.SubjectKindGroup:
		return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: s.Name}}
	case flowcontrolv1.SubjectKindServiceAccount:
		return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: s.Namespace, Name: s.Name}}
	}
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: s.Name}}
}

// FlowSchemaFormOf fills the form from an existing FlowSchema, to edit it.
// levels are the priority levels the select offers.
func FlowSchemaFormOf(fs *flowcontrolv1.FlowSchema, levels []string) model.FlowSchemaForm {
	f := model.FlowSchemaForm{
		Name:            fs.Name,
		ResourceVersion: fs.ResourceVersion,
		Precedence:      strconv.Itoa(int(fs.Spec.MatchingPrecedence)),
		PriorityLevel:   fs.Spec.PriorityLevelConfiguration.Name,
	}
	if !slices.Contains(levels, f.PriorityLevel) {
		f.PriorityLevel, f.PriorityTyped = model.PriorityLevelOther, fs.Spec.PriorityLevelConfiguration.Name
	}
	if fs.Spec.DistinguisherMethod != nil {
		f.Distinguisher = string(fs.Spec.DistinguisherMethod.Type)
	}
	for _, r := range fs.Spec.Rules {
		var rule model.FormRule
		for _, s := range r.Subjects {
			fsub := model.FormSubject{Kind: string(s.Kind)}
			switch {
			case s.User != nil:
				fsub.Name = s.User.Name
			case s.Group != nil:
				fsub.Name = s.Group.Name
			case s.ServiceAccount != nil:
				fsub.Namespace, fsub.Name = s.ServiceAccount.Namespace, s.ServiceAccount.Name
			}
			rule.Subjects = append(rule.Subjects, fsub)
		}
		for _, rr := range r.ResourceRules {
			rule.ResourceRules = append(rule.ResourceRules, model.FormResourceRule{
				Verbs: slices.Clone(rr.Verbs), APIGroups: JoinList(rr.APIGroups, true), Resources: JoinList(rr.Resources, false),
				ClusterScope: rr.ClusterScope, Namespaces: JoinList(rr.Namespaces, false),
			})
		}
		for _, nr := range r.NonResourceRules {
			rule.NonResourceRules = append(rule.NonResourceRules, model.FormNonResourceRule{
				Verbs: slices.Clone(nr.Verbs), URLs: JoinList(nr.NonResourceURLs, false),
			})
		}
		f.Rules = append(f.Rules, rule)
	}
	return f
}

// FlowSchemaFormHints are clusterdesk's reading of the API's rules for the
// form as typed, by field key. They are advice shown beside the fields; the
// request is sent anyway and the API server's answer is what counts. levels
// are the priority levels that exist (nil when unknown: no hint about it).
func FlowSchemaFormHints(f model.FlowSchemaForm, levels []string) map[string][]string {
	h := map[string][]string{}
	add := func(key, msg string) { h[key] = append(h[key], msg) }
	if n, err := strconv.Atoi(f.Precedence); err == nil {
		switch {
		case n < 1 || n > 10000:
			add(FormPrecedence, "The API server accepts 1 to 10000.")
		case n == 1 && f.Name != flowcontrolv1.FlowSchemaNameExempt:
			add(FormPrecedence, "Only the FlowSchema named exempt may have precedence 1.")
		}
	}
	pl := PriorityLevelName(f)
	switch {
	case pl == "":
		add(FormPriorityLevel, "Name a priority level.")
	case levels != nil && !slices.Contains(levels, pl):
		add(FormPriorityLevel, "No PriorityLevelConfiguration "+pl+" exists: the API server would mark this FlowSchema Dangling and skip it.")
	}
	if len(f.Rules) == 0 {
		add("rules", "Without rules this FlowSchema matches no request.")
	}
	for i, r := range f.Rules {
		rk := "r" + strconv.Itoa(i)
		if len(r.Subjects) == 0 {
			add(rk+".subjects", "A rule needs at least one subject.")
		}
		if len(r.ResourceRules) == 0 && len(r.NonResourceRules) == 0 {
			add(rk, "A rule needs at least one resource rule or non-resource rule.")
		}
		// A row not yet filled in gets no hints: the user has not got to it.
		for j, s := range r.Subjects {
			sk := rk + ".s" + strconv.Itoa(j)
			if s.Name == "" && s.Namespace == "" {
				continue
			}
			if s.Name == "" {
				add(sk+".name", "Give a name, or * for all.")
			}
			if s.Kind == string(flowcontrolv1.SubjectKindServiceAccount) && s.Namespace == "" {
				add(sk+".namespace", "A service account needs its namespace.")
			}
		}
		for j, rr := range r.ResourceRules {
			k := rk + ".rr" + strconv.Itoa(j)
			if len(rr.Verbs) == 0 && rr.APIGroups == "" && rr.Resources == "" && rr.Namespaces == "" && !rr.ClusterScope {
				continue
			}
			verbHints(add, k+".verbs", rr.Verbs)
			wildcardHint(add, k+".apigroups", SplitList(rr.APIGroups, true), "API group", true)
			wildcardHint(add, k+".resources", SplitList(rr.Resources, false), "resource", true)
			nss := SplitList(rr.Namespaces, false)
			if !rr.ClusterScope && len(nss) == 0 {
				add(k+".namespaces", "Check cluster scope, list namespaces, or both (* for every namespace).")
			}
			wildcardHint(add, k+".namespaces", nss, "namespace", false)
		}
		for j, nr := range r.NonResourceRules {
			k := rk + ".nr" + strconv.Itoa(j)
			if len(nr.Verbs) == 0 && nr.URLs == "" {
				continue
			}
			verbHints(add, k+".verbs", nr.Verbs)
			urls := SplitList(nr.URLs, false)
			wildcardHint(add, k+".urls", urls, "URL", true)
			if len(urls) > 1 || (len(urls) == 1 && urls[0] != "*") {
				for _, u := range urls {
					if msg := urlHint(u); msg != "" {
						add(k+".urls", u+": "+msg)
					}
				}
			}
		}
	}
	return h
}

func verbHints(add func(string, string), key string, verbs []string) {
	switch {
	case len(verbs) == 0:
		add(key, "Check at least one verb.")
	case len(verbs) > 1 && slices.Contains(verbs, "*"):
		add(key, "* must be the only verb.")
	}
}

func wildcardHint(add func(string, string), key string, list []string, what string, required bool) {
	switch {
	case len(list) == 0 && required:
		add(key, "Give at least one "+what+", or *.")
	case len(list) > 1 && slices.Contains(list, "*"):
		add(key, "* must be the only "+what+".")
	}
}

// urlHint mirrors the API server's ValidateNonResourceURLPath.
func urlHint(u string) string {
	switch {
	case u == "/":
		return ""
	case !strings.HasPrefix(u, "/"):
		return "must start with /."
	case strings.Contains(u, "//"):
		return "must not contain //."
	case strings.Count(u, "*") > 1 || (strings.Contains(u, "*") && !strings.HasSuffix(u, "/*")):
		return "* only as the last segment, as a prefix rule: /apis/*."
	}
	return ""
}

// FormFieldKey maps a field path of the API server's error (details.causes)
// to the form field that shows it, or "" when no field of the form does.
func FormFieldKey(path string) string {
	switch {
	case path == "metadata.name":
		return FormName
	case path == "spec.matchingPrecedence":
		return FormPrecedence
	case strings.HasPrefix(path, "spec.priorityLevelConfiguration"):
		return FormPriorityLevel
	case strings.HasPrefix(path, "spec.distinguisherMethod"):
		return FormDistinguisher
	case path == "spec.rules":
		return "rules"
	}
	rest, ok := strings.CutPrefix(path, "spec.rules[")
	if !ok {
		return ""
	}
	i, rest, ok := cutIndex(rest)
	if !ok {
		return ""
	}
	rk := "r" + strconv.Itoa(i)
	if rest == "" {
		return rk
	}
	switch {
	case rest == ".subjects":
		return rk + ".subjects"
	case strings.HasPrefix(rest, ".subjects["):
		j, field, ok := cutIndex(strings.TrimPrefix(rest, ".subjects["))
		if !ok {
			return rk + ".subjects"
		}
		sk := rk + ".s" + strconv.Itoa(j)
		switch {
		case field == ".kind":
			return sk + ".kind"
		case strings.HasSuffix(field, ".namespace"):
			return sk + ".namespace"
		case field != "":
			return sk + ".name"
		}
		return sk + ".name"
	case strings.HasPrefix(rest, ".resourceRules["):
		j, field, ok := cutIndex(strings.TrimPrefix(rest, ".resourceRules["))
		if !ok {
			return rk
		}
		k := rk + ".rr" + strconv.Itoa(j)
		for api, form := range map[string]string{".verbs": ".verbs", ".apiGroups": ".apigroups", ".resources": ".resources", ".namespaces": ".namespaces", ".clusterScope": ".namespaces"} {
			if field == api || strings.HasPrefix(field, api+"[") {
				return k + form
			}
		}
		return k + ".verbs"
	case strings.HasPrefix(rest, ".nonResourceRules["):
		j, field, ok := cutIndex(strings.TrimPrefix(rest, ".nonResourceRules["))
		if !ok {
			return rk
		}
		k := rk + ".nr" + strconv.Itoa(j)
		if strings.HasPrefix(field, ".nonResourceURLs") {
			return k + ".urls"
		}
		return k + ".verbs"
	}
	return rk
}

// cutIndex reads "12]rest" into 12 and "rest".
func cutIndex(s string) (int, string, bool) {
	num, rest, ok := strings.Cut(s, "]")
	if !ok {
		return 0, "", false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return 0, "", false
	}
	return n, rest, true
}

// AddedRowKey is the key of the row an add op made in f (after ApplyFormOp),
// "" for any other op: the page puts the cursor in it.
func AddedRowKey(f model.FlowSchemaForm, op FormOp) string {
	switch op.Kind {
	case OpAddRule:
		if n := len(f.Rules); n > 0 {
			return "r" + strconv.Itoa(n-1) + ".s0"
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
	rule := "r" + strconv.Itoa(op.Rule)
	switch op.Kind {
	case OpAddSubject:
		return rowKey(rule+".s", len(r.Subjects))
	case OpAddResource:
		return rowKey(rule+".rr", len(r.ResourceRules))
	}
	return rowKey(rule+".nr", len(r.NonResourceRules))
}

func rowKey(prefix string, n int) string {
	if n == 0 {
		return ""
	}
	return prefix + strconv.Itoa(n-1)
}

// FlowSchemaFormValues is what the form posts for f (without the op and the
// CSRF token): the inverse of ParseFlowSchemaForm. The tests post with it;
// views/pages/apf_form.templ must render the same names (handlers/apf_form_test.go
// checks that it does).
func FlowSchemaFormValues(f model.FlowSchemaForm) url.Values {
	v := url.Values{}
	set := func(k, val string) { v.Set(k, val) }
	set(FormName, f.Name)
	if f.ResourceVersion != "" {
		set("resourceVersion", f.ResourceVersion)
	}
	if f.Base != "" {
		set("base", f.Base)
	}
	set(FormPrecedence, f.Precedence)
	set(FormPriorityLevel, f.PriorityLevel)
	set(FormPriorityTyped, f.PriorityTyped)
	set(FormDistinguisher, f.Distinguisher)
	for i, r := range f.Rules {
		rk := "r" + strconv.Itoa(i)
		set(rk+".rule", "1")
		for j, s := range r.Subjects {
			k := rk + ".s" + strconv.Itoa(j)
			set(k+".kind", s.Kind)
			set(k+".namespace", s.Namespace)
			set(k+".name", s.Name)
		}
		for j, rr := range r.ResourceRules {
			k := rk + ".rr" + strconv.Itoa(j)
			v[k+".verbs"] = slices.Clone(rr.Verbs)
			set(k+".apigroups", rr.APIGroups)
			set(k+".resources", rr.Resources)
			set(k+".namespaces", rr.Namespaces)
			if rr.ClusterScope {
				set(k+".clusterscope", "1")
			}
		}
		for j, nr := range r.NonResourceRules {
			k := rk + ".nr" + strconv.Itoa(j)
			v[k+".verbs"] = slices.Clone(nr.Verbs)
			set(k+".urls", nr.URLs)
		}
	}
	return v
}
