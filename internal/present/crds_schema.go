package present

import (
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/clusterdesk/clusterdesk/internal/crd"
	"github.com/clusterdesk/clusterdesk/internal/docs"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// SchemaBudget and SchemaTextBudget bound what one schema page renders: the
// fields, and the bytes of their descriptions. The largest real-world
// schemas have ~10,000 fields (Argo Workflows) or descriptions of ~700 KB;
// rendered whole that is megabytes of HTML and ~100,000 elements. Whole
// levels are rendered while they fit; a field on the last level with more
// below links to a page focused on it.
const (
	SchemaBudget     = 600
	SchemaTextBudget = 150_000
)

// SchemaNotFound says why a schema page cannot be shown.
type SchemaNotFound struct{ Reason string }

func (e *SchemaNotFound) Error() string { return e.Reason }

// CRDSchema lays out the schema of one version of a CRD, focused on the field
// at path ("" for the whole object).
func CRDSchema(c *apiextensionsv1.CustomResourceDefinition, version, path string) (model.SchemaPage, error) {
	v, ok := crd.FindVersion(c, version)
	if !ok {
		return model.SchemaPage{}, &SchemaNotFound{c.Name + " has no version " + strconv.Quote(version) + "."}
	}
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return model.SchemaPage{}, &SchemaNotFound{c.Name + " " + version + " has no schema."}
	}
	chain := crd.Tree(v.Schema.OpenAPIV3Schema).Chain(path)
	if chain == nil {
		return model.SchemaPage{}, &SchemaNotFound{c.Name + " " + version + " has no field " + strconv.Quote(path) + "."}
	}
	focus := chain[len(chain)-1]
	p := model.SchemaPage{CRD: c.Name, Kind: c.Spec.Names.Kind, Version: version, Path: path, Fields: focus.Descendants}
	for _, o := range c.Spec.Versions {
		if o.Schema != nil && o.Schema.OpenAPIV3Schema != nil {
			p.Versions = append(p.Versions, model.SchemaVersion{Name: o.Name, Href: urls.CRDSchema(c.Name, o.Name, ""), Current: o.Name == version})
		}
	}
	for _, n := range chain {
		label := n.Name
		if n.Depth == 0 {
			label = c.Spec.Names.Kind
		}
		p.Trail = append(p.Trail, model.Crumb{Label: label, Href: urls.CRDSchema(c.Name, version, n.Path)})
	}
	p.Trail[len(p.Trail)-1].Href = ""

	depth := levelsWithin(focus)
	p.Root = schemaNode(c.Name, version, focus, focus.Depth, focus.Depth+depth, &p.Shown)
	p.Root.Open = true
	if depth < maxDepth(focus)-focus.Depth {
		p.Note = "This schema is large: " + strconv.Itoa(p.Shown) + " of its " + strconv.Itoa(p.Fields) + " fields, " +
			strconv.Itoa(depth) + " levels below " + orRoot(focus.Path) + ", are on this page. Deeper fields open in a view of their own: follow “open” beside a field."
	}
	return p, nil
}

func orRoot(path string) string {
	if path == "" {
		return "the top"
	}
	return path
}

// levelsWithin is how many levels below n fit within the budgets, at least one.
func levelsWithin(n *crd.Node) int {
	level := []*crd.Node{n}
	fields, text, depth := 0, 0, 0
	for {
		var next []*crd.Node
		size := 0
		for _, x := range level {
			next = append(next, x.Children...)
			for _, c := range x.Children {
				size += len(c.Description)
			}
		}
		if len(next) == 0 || (depth > 0 && (fields+len(next) > SchemaBudget || text+size > SchemaTextBudget)) {
			return max(depth, 1)
		}
		fields, text = fields+len(next), text+size
		depth++
		level = next
	}
}

func maxDepth(n *crd.Node) int {
	d := n.Depth
	for _, c := range n.Children {
		d = max(d, maxDepth(c))
	}
	return d
}

// schemaNode converts n and its children down to depth last; fields on the
// last level keep a link to their own view. Levels up to one below the
// focus start open.
func schemaNode(crdName, version string, n *crd.Node, focus, last int, shown *int) model.SchemaNode {
	out := model.SchemaNode{
		Name: n.Name, Path: n.Path, Type: n.Type, Format: n.Format, Required: n.Required, Nullable: n.Nullable,
		DescriptionHTML: docs.Markdown(n.Description), Enum: n.Enum, Default: n.Default, Pattern: n.Pattern,
		Limits: n.Limits, Extensions: n.Extensions, Junctors: n.Junctors,
		Open: n.Depth-focus <= 1 && n.Depth < last,
	}
	for _, r := range n.Rules {
		out.Rules = append(out.Rules, schemaRule(r))
	}
	if len(n.Children) > 0 && n.Depth != focus {
		out.FocusHref = urls.CRDSchema(crdName, version, n.Path)
	}
	if n.Depth >= last {
		out.Hidden = n.Descendants
		return out
	}
	for _, c := range n.Children {
		*shown++
		out.Children = append(out.Children, schemaNode(crdName, version, c, focus, last, shown))
	}
	return out
}

func schemaRule(r crd.Rule) model.SchemaRule {
	out := model.SchemaRule{Rule: r.Rule, Message: r.Message}
	if r.MessageExpression != "" {
		out.Message = "message expression: " + r.MessageExpression
	}
	var detail []string
	if r.Reason != "" {
		detail = append(detail, "reason "+r.Reason)
	}
	if r.FieldPath != "" {
		detail = append(detail, "fieldPath "+r.FieldPath)
	}
	if r.OptionalOldSelf {
		detail = append(detail, "optionalOldSelf")
	}
	out.Detail = strings.Join(detail, " · ")
	return out
}
