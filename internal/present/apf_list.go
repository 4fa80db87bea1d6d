package present

import (
	"strconv"
	"strings"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// The kind IDs the FlowSchema pages link to (kube.FlowSchemas and
// kube.PriorityLevels; present does not import kube).
const (
	flowSchemasKind    = "flowschemas"
	priorityLevelsKind = "prioritylevels"
)

// The overview's columns. "order" is first on screen and the default sort;
// present.table wants the name first, so display order is restored after.
var flowSchemaOverviewColumns = []column{
	{"name", "Name", true},
	{"order", "#", true},
	{"precedence", "Precedence", true},
	{"prioritylevel", "Priority level", true},
	{"distinguisher", "Distinguisher", true},
	{"rules", "Matches", false},
}

// FlowSchemaOverview lays out the FlowSchema list in the order the apiserver
// evaluates them (apf.Sequence), unless q asks for another sort. levels may be
// nil when priority levels cannot be read: the Dangling conditions decide then.
func FlowSchemaOverview(schemas []*flowcontrolv1.FlowSchema, levels apf.Levels, q ListQuery, _ time.Time) model.FlowSchemaListPage {
	const kind = "flowschemas"
	action := urls.List(kind)
	if q.Sort == "" {
		q.Sort = "order"
	}
	var page model.FlowSchemaListPage
	byName := map[string]model.FlowSchemaRow{}
	var rows []row
	all := 0 // FlowSchemas in the cluster, whatever the label selector
	for _, e := range apf.Sequence(schemas, levels) {
		if e.Builtin {
			page.Notes = append(page.Notes, builtinNote(e))
			continue
		}
		all++
		if !q.Selects(e.FlowSchema.Labels) {
			continue // positions stay those of the full evaluation order
		}
		r := overviewRow(e, levels)
		byName[r.Name] = r
		rows = append(rows, newRow(kind, action, r.Name,
			[]model.Cell{
				{Text: r.Position},
				{Text: r.Precedence},
				{Text: r.PriorityLevel, Badges: r.PriorityLevelBadges},
				{Text: r.Distinguisher},
				{Text: r.Summary},
			},
			[]string{padInt(int64(e.Position)), padInt(int64(e.FlowSchema.Spec.MatchingPrecedence)), r.PriorityLevel, r.Distinguisher, ""}))
		// The name cell's badges are searchable like the other cells.
		rows[len(rows)-1].search += strings.ToLower(badgeTexts(r.NameBadges))
	}
	page.List = table(kind, "FlowSchemas", action, flowSchemaOverviewColumns, rows, q)
	page.List.Total = all
	// Show "#" before the name.
	cols := page.List.Columns
	page.List.Columns = append([]model.Column{cols[1], cols[0]}, cols[2:]...)
	for _, r := range page.List.Rows {
		page.Rows = append(page.Rows, byName[r.Name])
	}
	page.List.Rows = nil
	page.ClassifyHref = urls.Classify
	return page
}

func badgeTexts(bs []model.Badge) string {
	var sb strings.Builder
	for _, b := range bs {
		sb.WriteString(b.Text)
		sb.WriteByte(' ')
	}
	return sb.String()
}

func builtinNote(e apf.Entry) model.Banner {
	return model.Banner{
		Tone:  model.ToneWarning,
		Title: "No usable FlowSchema " + strconv.Quote(e.FlowSchema.Name),
		Message: "The cluster has no usable mandatory FlowSchema " + strconv.Quote(e.FlowSchema.Name) +
			", so the apiserver classifies with its built-in copy (at position " + strconv.Itoa(e.Position) +
			") until it recreates the object.",
		TestID: "banner-builtin-" + e.FlowSchema.Name,
	}
}

func overviewRow(e apf.Entry, levels apf.Levels) model.FlowSchemaRow {
	fs := e.FlowSchema
	pl := fs.Spec.PriorityLevelConfiguration.Name
	r := model.FlowSchemaRow{
		ID:            "row-flowschemas-" + fs.Name,
		Position:      strconv.Itoa(e.Position),
		Name:          fs.Name,
		Href:          urls.Object(flowSchemasKind, fs.Name),
		NameBadges:    MaintenanceBadges(fs),
		Precedence:    strconv.Itoa(int(fs.Spec.MatchingPrecedence)),
		PriorityLevel: pl,
		Distinguisher: distinguisher(fs),
		Summary:       RulesSummary(fs.Spec.Rules),
		Skipped:       e.Dangling,
	}
	if e.Dangling {
		hint := "There is no PriorityLevelConfiguration " + strconv.Quote(pl) + ": the apiserver skips this FlowSchema."
		if c, ok := danglingCondition(fs); ok && c.Message != "" {
			hint += " Dangling condition: " + c.Message
		}
		r.PriorityLevelBadges = []model.Badge{{Text: "Missing", Tone: model.ToneError, Hint: hint}}
		r.NameBadges = append(r.NameBadges, model.Badge{Text: "Skipped", Tone: model.ToneError, Hint: hint})
	} else if _, ok := levels.Level(pl); ok || levels == nil {
		r.PriorityLevelHref = urls.Object(priorityLevelsKind, pl)
	}
	return r
}

func danglingCondition(fs *flowcontrolv1.FlowSchema) (flowcontrolv1.FlowSchemaCondition, bool) {
	for _, c := range fs.Status.Conditions {
		if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
			return c, true
		}
	}
	return flowcontrolv1.FlowSchemaCondition{}, false
}

// MaintenanceBadges tells whether the apiserver maintains fs, as its APF
// config producer does (kubernetes pkg/registry/flowcontrol/ensurer/strategy.go,
// v1.36.3): the mandatory exempt and catch-all objects get their spec (and
// the annotation) back whatever the annotation says; other objects annotated
// apf.kubernetes.io/autoupdate-spec=true get it back unless the annotation is "false".
func MaintenanceBadges(fs *flowcontrolv1.FlowSchema) []model.Badge {
	if b, ok := maintenance(fs.Name, fs.Annotations, fs.Generation); ok {
		return []model.Badge{b}
	}
	return nil
}

func maintenance(name string, annotations map[string]string, generation int64) (model.Badge, bool) {
	value, annotated := annotations[flowcontrolv1.AutoUpdateAnnotationKey]
	mandatory := name == flowcontrolv1.FlowSchemaNameExempt || name == flowcontrolv1.FlowSchemaNameCatchAll
	if mandatory {
		return model.Badge{Text: "Mandatory", Tone: model.ToneWarning,
			Hint: "The apiserver maintains this mandatory object and restores its spec whatever apf.kubernetes.io/autoupdate-spec says: edits are overwritten."}, true
	}
	if !annotated {
		return model.Badge{}, false
	}
	auto, err := strconv.ParseBool(value)
	switch {
	case err == nil && auto:
		return model.Badge{Text: "Auto-update", Tone: model.ToneWarning,
			Hint: "The apiserver maintains this object (apf.kubernetes.io/autoupdate-spec: \"true\"): it overwrites edits to the spec unless the annotation is set to \"false\"."}, true
	case err == nil:
		return model.Badge{Text: "Auto-update off", Tone: model.ToneNeutral,
			Hint: "apf.kubernetes.io/autoupdate-spec is \"false\": the apiserver keeps edits to this object."}, true
	case generation == 1:
		return model.Badge{Text: "Auto-update", Tone: model.ToneWarning,
			Hint: "apf.kubernetes.io/autoupdate-spec is not a boolean and the object was never edited: the apiserver may overwrite its spec. Set the annotation to \"false\" to keep edits."}, true
	}
	return model.Badge{}, false
}

// MaintenanceWarning is the banner a detail page shows for a maintained object.
func MaintenanceWarning(name string, annotations map[string]string, generation int64) (model.Banner, bool) {
	b, ok := maintenance(name, annotations, generation)
	if !ok || b.Tone != model.ToneWarning {
		return model.Banner{}, false
	}
	return model.Banner{Tone: model.ToneWarning, Title: "Maintained by the apiserver", Message: b.Hint, TestID: "banner-autoupdate"}, true
}

// RulesSummary describes the rules of a FlowSchema on one line: per rule, its
// subjects, then what they may do, e.g.
// "group system:masters → * on * (any group) everywhere; * on URLs *".
func RulesSummary(rules []flowcontrolv1.PolicyRulesWithSubjects) string {
	if len(rules) == 0 {
		return "no rules: matches nothing"
	}
	parts := make([]string, len(rules))
	for i, r := range rules {
		var what []string
		for _, rr := range r.ResourceRules {
			what = append(what, strings.Join(rr.Verbs, ",")+" on "+strings.Join(rr.Resources, ",")+" ("+apiGroupsText(rr.APIGroups)+") "+scopeText(rr))
		}
		for _, nr := range r.NonResourceRules {
			what = append(what, strings.Join(nr.Verbs, ",")+" on URLs "+strings.Join(nr.NonResourceURLs, ","))
		}
		parts[i] = apf.SubjectsText(r.Subjects) + " → " + strings.Join(what, "; ")
	}
	return strings.Join(parts, " | ")
}

func apiGroupsText(groups []string) string {
	out := make([]string, len(groups))
	for i, g := range groups {
		switch g {
		case "":
			out[i] = "core"
		case "*":
			out[i] = "any group"
		default:
			out[i] = g
		}
	}
	return strings.Join(out, ",")
}

func scopeText(rr flowcontrolv1.ResourcePolicyRule) string {
	every := len(rr.Namespaces) == 1 && rr.Namespaces[0] == flowcontrolv1.NamespaceEvery
	var ns string
	switch {
	case every:
		ns = "any namespace"
	case len(rr.Namespaces) > 0:
		ns = "namespaces " + strings.Join(rr.Namespaces, ",")
	}
	switch {
	case rr.ClusterScope && every:
		return "everywhere"
	case rr.ClusterScope && ns != "":
		return "cluster-scoped and in " + ns
	case rr.ClusterScope:
		return "cluster-scoped only"
	case ns != "":
		return "in " + ns
	}
	return "nowhere (no clusterScope, no namespaces)"
}
