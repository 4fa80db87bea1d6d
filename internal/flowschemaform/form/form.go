// Package form is the FlowSchema form as typed: its values (Form), its field
// names and keys, the buttons' ops, decoding a post (Parse) and encoding one
// (Values), adding and removing rows. It imports only the standard library,
// so the templates name the fields from here (views import no k8s.io) and the
// parser and the page agree by construction. The use case
// (internal/flowschemaform) turns a Form into a FlowSchema spec and back.
package form

import (
	"strconv"
)

// The FlowSchema form's field names. A rule's fields are prefixed "r<i>.", a
// subject's "r<i>.s<j>.", a resource rule's "r<i>.rr<j>." and a non-resource
// rule's "r<i>.nr<j>." (RuleKey, SubjectKey, ResourceKey, NonResourceKey, then
// Key with a row field); the same keys name the errors and hints shown beside
// each field. A rule posts "r<i>.rule" so that a rule without rows survives.
const (
	FieldName            = "name"
	FieldPrecedence      = "precedence"
	FieldPriorityLevel   = "prioritylevel"
	FieldPriorityTyped   = "prioritylevel-typed"
	FieldDistinguisher   = "distinguisher"
	FieldOp              = "op"
	FieldResourceVersion = "resourceVersion"
	FieldBase            = "base"
	// FieldRules keys what is said of the rules as a whole (errors, hints).
	FieldRules = "rules"
)

// Row fields, after a row's key and a dot (Key).
const (
	RowRule         = "rule" // a rule's marker: RuleKey(i) + ".rule"
	RowSubjects     = "subjects"
	RowKind         = "kind"
	RowName         = "name"
	RowNamespace    = "namespace"
	RowVerbs        = "verbs"
	RowAPIGroups    = "apigroups"
	RowResources    = "resources"
	RowClusterScope = "clusterscope"
	RowNamespaces   = "namespaces"
	RowURLs         = "urls"
)

// Row prefixes inside a rule.
const (
	rulePrefix     = "r"
	subjectRow     = "s"
	resourceRow    = "rr"
	nonResourceRow = "nr"
)

// RuleKey is rule i's key, "r<i>".
func RuleKey(i int) string { return rulePrefix + strconv.Itoa(i) }

// SubjectKey is subject j of rule i, "r<i>.s<j>".
func SubjectKey(i, j int) string { return RuleKey(i) + "." + subjectRow + strconv.Itoa(j) }

// ResourceKey is resource rule j of rule i, "r<i>.rr<j>".
func ResourceKey(i, j int) string { return RuleKey(i) + "." + resourceRow + strconv.Itoa(j) }

// NonResourceKey is non-resource rule j of rule i, "r<i>.nr<j>".
func NonResourceKey(i, j int) string { return RuleKey(i) + "." + nonResourceRow + strconv.Itoa(j) }

// Key is a row's field: Key(SubjectKey(0, 1), RowKind) is "r0.s1.kind".
func Key(row, field string) string { return row + "." + field }

// MaxRows bounds every list the form decodes (rules, and rows per rule):
// the API server has no such limit, but a form with more is not one a person
// filled in, and the decoder must not let a posted index size its memory.
const MaxRows = 64

// Verbs are the verbs a FlowSchema rule accepts (the API server's
// supportedVerbs), "*" first.
var Verbs = []string{"*", "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "proxy"}

// Subject kinds and distinguisher methods, as flowcontrol/v1 spells them
// (internal/flowschemaform's tests hold them to the API's constants).
const (
	KindUser           = "User"
	KindGroup          = "Group"
	KindServiceAccount = "ServiceAccount"
	ByUser             = "ByUser"
	ByNamespace        = "ByNamespace"
)

// SubjectKinds are the kinds of subject a rule may name.
var SubjectKinds = []string{KindUser, KindGroup, KindServiceAccount}

// Form is what the form holds, as typed.
type Form struct {
	Name            string
	ResourceVersion string // the version the user started from; "" when creating
	Base            string // the object the user started from, encoded (edit.EncodeBase)
	Precedence      string
	PriorityLevel   string // chosen from the select
	PriorityTyped   string // typed when PriorityLevel is PriorityLevelOther
	Distinguisher   string // "", "ByUser" or "ByNamespace"
	Rules           []Rule
}

// PriorityLevelOther is the select's value meaning "the typed name".
const PriorityLevelOther = "-"

// Rule is one rule: who (subjects) and what (resource and non-resource rules).
type Rule struct {
	Subjects         []Subject
	ResourceRules    []ResourceRule
	NonResourceRules []NonResourceRule
}

// Subject is one subject row.
type Subject struct {
	Kind      string // "User", "Group" or "ServiceAccount"
	Name      string
	Namespace string // ServiceAccount only
}

// ResourceRule is one resource rule row. Lists are typed comma or space
// separated; the core API group is written "".
type ResourceRule struct {
	Verbs        []string
	APIGroups    string
	Resources    string
	ClusterScope bool
	Namespaces   string
}

// NonResourceRule is one non-resource rule row.
type NonResourceRule struct {
	Verbs []string
	URLs  string
}
