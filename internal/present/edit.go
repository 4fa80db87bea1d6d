package present

import (
	"github.com/clusterdesk/clusterdesk/internal/crd"
	"github.com/clusterdesk/clusterdesk/internal/docs"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// EditError is an explained failure (edit.Problem, edit.IgnoredProblem) as
// the editor and the forms show it.
func EditError(f edit.Failure) model.EditError {
	return model.EditError{Title: f.Title, Message: f.Message, Local: f.Local, Line: f.Line, Causes: causes(f.Causes)}
}

func causes(cs []edit.Cause) []model.Cause {
	if cs == nil {
		return nil
	}
	out := make([]model.Cause, len(cs))
	for i, c := range cs {
		out[i] = model.Cause(c)
	}
	return out
}

// ManagerConflicts are a server-side apply's contested fields by manager (edit.ApplyConflicts).
func ManagerConflicts(ms []edit.ManagerConflict) []model.ManagerConflict {
	if ms == nil {
		return nil
	}
	out := make([]model.ManagerConflict, len(ms))
	for i, m := range ms {
		out[i] = model.ManagerConflict{Manager: m.Manager, Fields: causes(m.Fields)}
	}
	return out
}

// Diff is a text diff (edit.Diff) as the diff view shows it.
func Diff(d edit.TextDiff) model.Diff {
	out := model.Diff{Title: d.Title, From: d.From, To: d.To, Added: d.Added, Removed: d.Removed, Note: d.Note, TooLarge: d.TooLarge}
	if d.Lines != nil {
		out.Lines = make([]model.DiffLine, len(d.Lines))
		for i, l := range d.Lines {
			out.Lines[i] = model.DiffLine{Kind: model.DiffKind(l.Kind), Old: l.Old, New: l.New, Text: l.Text}
		}
	}
	return out
}

// DocTree lays out the fields below root for the editor's docs panel:
// descriptions as safe HTML (internal/docs), the first level open. Fields the
// API server sets (status, and metadata it manages) are included: the reader
// sees them in the text too.
func DocTree(root *crd.Node) []model.SchemaNode {
	if root == nil {
		return nil
	}
	out := make([]model.SchemaNode, 0, len(root.Children))
	for _, c := range root.Children {
		out = append(out, docNode(c))
	}
	return out
}

func docNode(n *crd.Node) model.SchemaNode {
	out := model.SchemaNode{
		Name: n.Name, Path: n.Path, Type: n.Type, Format: n.Format, Required: n.Required, Nullable: n.Nullable,
		DescriptionHTML: docs.Markdown(n.Description), Enum: n.Enum, Default: n.Default, Pattern: n.Pattern,
		Limits: n.Limits, Extensions: n.Extensions, Junctors: n.Junctors,
		Open: n.Depth <= 1 && n.Name == "spec",
	}
	for _, c := range n.Children {
		out.Children = append(out.Children, docNode(c))
	}
	return out
}
