// Package crd explains CustomResourceDefinitions: their versions and what
// needs attention (stored versions no longer served, conversion webhooks,
// conditions), and each version's openAPIV3Schema as a tree of fields.
package crd

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Node is one field of a schema, with everything a reader needs to fill it in.
type Node struct {
	Name        string // property name; "[]" for array items, "{}" for map values; "" for the root
	Path        string // from the root: "spec.containers[].name", "metadata.labels{}"; "" for the root
	Depth       int    // 0 for the root
	Type        string // "object", "array", "string", "integer", "int-or-string", "any" …
	Format      string
	Required    bool // its parent lists it as required
	Nullable    bool
	Description string   // as written (Markdown)
	Enum        []string // JSON values
	Default     string   // JSON
	Pattern     string
	Limits      []string // "minimum 1", "maxLength 63", "maxItems 5", "uniqueItems" …
	Extensions  []string // "x-kubernetes-list-type: map" …
	Rules       []Rule   // x-kubernetes-validations
	Junctors    []string // "oneOf: required spec | required ref" …
	Children    []*Node
	Descendants int // number of nodes below this one
}

// Rule is a CEL validation rule (x-kubernetes-validations).
type Rule struct {
	Rule, Message, MessageExpression, Reason, FieldPath string
	OptionalOldSelf                                     bool
}

// Tree builds the field tree of schema; nil gives nil.
func Tree(schema *apiextensionsv1.JSONSchemaProps) *Node {
	if schema == nil {
		return nil
	}
	return build(schema, "", "", 0, false)
}

// Fields is how many fields schema has below its root: Tree(schema)'s
// Descendants, counted without building the tree (the CRD's detail page shows
// only the count, and a tree of a large real schema is megabytes per view).
func Fields(schema *apiextensionsv1.JSONSchemaProps) int {
	if schema == nil {
		return 0
	}
	return fieldsBelow(schema.Properties, schema.Items, schema.AdditionalProperties)
}

// fieldsBelow counts the fields under a schema's properties, items and
// additionalProperties. It takes those rather than the schema so that no
// property's copy has its address taken: a recursive function's pointer
// argument escapes, and each property would be a heap copy of ~1 KB.
func fieldsBelow(props map[string]apiextensionsv1.JSONSchemaProps, items *apiextensionsv1.JSONSchemaPropsOrArray, more *apiextensionsv1.JSONSchemaPropsOrBool) int {
	n := 0
	for _, p := range props {
		n += 1 + fieldsBelow(p.Properties, p.Items, p.AdditionalProperties)
	}
	if items != nil && items.Schema != nil {
		n += 1 + fieldsBelow(items.Schema.Properties, items.Schema.Items, items.Schema.AdditionalProperties)
	}
	if more != nil && more.Schema != nil {
		n += 1 + fieldsBelow(more.Schema.Properties, more.Schema.Items, more.Schema.AdditionalProperties)
	}
	return n
}

func build(s *apiextensionsv1.JSONSchemaProps, name, path string, depth int, required bool) *Node {
	n := &Node{
		Name: name, Path: path, Depth: depth, Type: typeOf(s), Format: s.Format, Required: required,
		Nullable: s.Nullable, Description: s.Description, Pattern: s.Pattern,
		Limits: limits(s), Extensions: extensions(s), Junctors: junctors(s),
	}
	if s.Default != nil {
		n.Default = string(s.Default.Raw)
	}
	for _, e := range s.Enum {
		n.Enum = append(n.Enum, string(e.Raw))
	}
	for _, r := range s.XValidations {
		rule := Rule{Rule: r.Rule, Message: r.Message, MessageExpression: r.MessageExpression, FieldPath: r.FieldPath,
			OptionalOldSelf: r.OptionalOldSelf != nil && *r.OptionalOldSelf}
		if r.Reason != nil {
			rule.Reason = string(*r.Reason)
		}
		n.Rules = append(n.Rules, rule)
	}
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p := s.Properties[k]
		n.add(build(&p, k, join(path, k), depth+1, slices.Contains(s.Required, k)))
	}
	if s.Items != nil && s.Items.Schema != nil {
		n.add(build(s.Items.Schema, "[]", path+"[]", depth+1, false))
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		n.add(build(s.AdditionalProperties.Schema, "{}", path+"{}", depth+1, false))
	}
	return n
}

func (n *Node) add(c *Node) {
	n.Children = append(n.Children, c)
	n.Descendants += 1 + c.Descendants
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Find returns the node at path ("" is the root), or nil.
func (n *Node) Find(path string) *Node {
	chain := n.Chain(path)
	if chain == nil {
		return nil
	}
	return chain[len(chain)-1]
}

// Chain returns the nodes from n down to the node at path, or nil when there
// is none.
func (n *Node) Chain(path string) []*Node {
	if n == nil {
		return nil
	}
	if n.Path == path {
		return []*Node{n}
	}
	for _, c := range n.Children {
		// Only descend where the path can continue.
		if strings.HasPrefix(path, c.Path) {
			if rest := c.Chain(path); rest != nil {
				return append([]*Node{n}, rest...)
			}
		}
	}
	return nil
}

// typeOf names a schema's type the way a reader thinks of it.
func typeOf(s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.XIntOrString:
		return "int-or-string"
	case s.Type == "array" && s.Items != nil && s.Items.Schema != nil && s.Items.Schema.Type != "" && s.Items.Schema.Type != "object" && s.Items.Schema.Type != "array":
		return "array of " + s.Items.Schema.Type
	case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil && len(s.Properties) == 0:
		if t := s.AdditionalProperties.Schema.Type; t != "" && t != "object" && t != "array" {
			return "map of " + t
		}
		return "map"
	case s.Type != "":
		return s.Type
	case s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields:
		return "any"
	}
	return ""
}

func limits(s *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	num := func(label string, v *float64, exclusive bool) {
		if v == nil {
			return
		}
		if exclusive {
			label = "exclusive " + label
		}
		out = append(out, label+" "+strconv.FormatFloat(*v, 'g', -1, 64))
	}
	cnt := func(label string, v *int64) {
		if v != nil {
			out = append(out, label+" "+strconv.FormatInt(*v, 10))
		}
	}
	num("minimum", s.Minimum, s.ExclusiveMinimum)
	num("maximum", s.Maximum, s.ExclusiveMaximum)
	num("multipleOf", s.MultipleOf, false)
	cnt("minLength", s.MinLength)
	cnt("maxLength", s.MaxLength)
	cnt("minItems", s.MinItems)
	cnt("maxItems", s.MaxItems)
	cnt("minProperties", s.MinProperties)
	cnt("maxProperties", s.MaxProperties)
	if s.UniqueItems {
		out = append(out, "uniqueItems")
	}
	return out
}

func extensions(s *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
		out = append(out, "x-kubernetes-preserve-unknown-fields")
	}
	if s.XEmbeddedResource {
		out = append(out, "x-kubernetes-embedded-resource")
	}
	if s.XIntOrString {
		out = append(out, "x-kubernetes-int-or-string")
	}
	if s.XListType != nil {
		out = append(out, "x-kubernetes-list-type: "+*s.XListType)
	}
	if len(s.XListMapKeys) > 0 {
		out = append(out, "x-kubernetes-list-map-keys: "+strings.Join(s.XListMapKeys, ", "))
	}
	if s.XMapType != nil {
		out = append(out, "x-kubernetes-map-type: "+*s.XMapType)
	}
	return out
}

// junctors summarises allOf/anyOf/oneOf/not, which structural schemas use
// for value constraints such as "exactly one of these fields".
func junctors(s *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	alts := func(label string, ss []apiextensionsv1.JSONSchemaProps) {
		if len(ss) == 0 {
			return
		}
		parts := make([]string, 0, len(ss))
		for i := range ss {
			parts = append(parts, constraint(&ss[i]))
		}
		out = append(out, label+": "+strings.Join(parts, " | "))
	}
	alts("allOf", s.AllOf)
	alts("anyOf", s.AnyOf)
	alts("oneOf", s.OneOf)
	if s.Not != nil {
		out = append(out, "not: "+constraint(s.Not))
	}
	return out
}

// constraint is a compact JSON rendering of a junctor's alternative, with
// its most common form, a required list, spelled out.
func constraint(s *apiextensionsv1.JSONSchemaProps) string {
	if len(s.Required) > 0 && len(s.Properties) == 0 && s.Type == "" && len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) == 0 && s.Not == nil {
		return "required " + strings.Join(s.Required, ", ")
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "(constraint)"
	}
	const max = 200
	if len(b) > max {
		return strings.ToValidUTF8(string(b[:max]), "") + "…"
	}
	return string(b)
}
