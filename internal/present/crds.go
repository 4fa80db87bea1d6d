package present

import (
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/crd"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

var crdColumns = []column{
	{"name", "Name", true},
	{"group", "Group", true},
	{"kind", "Kind", true},
	{"scope", "Scope", true},
	{"versions", "Versions", false},
	{"established", "Established", true},
	lintColumn,
	{"age", "Age", true},
}

// crdVersions lists versions with the storage version marked and unserved or
// deprecated ones flagged, e.g. "v1 (storage), v1beta1 (deprecated)".
func crdVersions(crd *apiextensionsv1.CustomResourceDefinition) string {
	var out []string
	for _, v := range crd.Spec.Versions {
		var tags []string
		if v.Storage {
			tags = append(tags, "storage")
		}
		if !v.Served {
			tags = append(tags, "not served")
		}
		if v.Deprecated {
			tags = append(tags, "deprecated")
		}
		s := v.Name
		if len(tags) > 0 {
			s += " (" + strings.Join(tags, ", ") + ")"
		}
		out = append(out, s)
	}
	return join(out)
}

func crdCondition(c *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) string {
	for _, cond := range c.Status.Conditions {
		if cond.Type == t {
			return string(cond.Status)
		}
	}
	return "Unknown"
}

func crdStatus(crd *apiextensionsv1.CustomResourceDefinition) model.Badge {
	switch {
	case crdCondition(crd, apiextensionsv1.Terminating) == "True":
		return model.Badge{Text: "Terminating", Tone: model.ToneWarning}
	case crdCondition(crd, apiextensionsv1.Established) == "True":
		return model.Badge{Text: "Established", Tone: model.ToneOK}
	case crdCondition(crd, apiextensionsv1.NamesAccepted) == "False":
		return model.Badge{Text: "Names not accepted", Tone: model.ToneError}
	default:
		return model.Badge{Text: "Not established", Tone: model.TonePending}
	}
}

// CRDList lays out the CustomResourceDefinition list page.
func CRDList(items []*apiextensionsv1.CustomResourceDefinition, q ListQuery, now time.Time) model.ListPage {
	const kind = "crds"
	action := urls.List(kind)
	rows := make([]row, 0, len(items))
	for _, c := range items {
		ageC, ageKey := ageCell(c.CreationTimestamp, now)
		status := crdStatus(c)
		lints := admission.ListTally(kind, c, now, func() admission.Tally { return admission.TallyOf(crd.Lint(c, now), crd.IsDrift) })
		lintC, lintKey := lintCell(lints)
		r := newRow(kind, action, c.Name, []model.Cell{
			{Text: c.Spec.Group, Mono: true},
			{Text: c.Spec.Names.Kind},
			{Text: string(c.Spec.Scope)},
			{Text: crdVersions(c)},
			{Badges: []model.Badge{status}},
			lintC,
			ageC,
		}, []string{c.Spec.Group, c.Spec.Names.Kind, string(c.Spec.Scope), "", status.Text, lintKey, ageKey})
		r.lints = lints
		rows = append(rows, r)
	}
	return table(kind, "CustomResourceDefinitions", action, crdColumns, rows, q)
}

// CRDDetail lays out one CustomResourceDefinition: names, versions with
// links to each schema, conversion, printer columns and what needs attention.
func CRDDetail(c *apiextensionsv1.CustomResourceDefinition, now time.Time) model.DetailPage {
	return CRDDetailCounted(c, nil, now)
}

// CRDDetailCounted is CRDDetail with each version's count of schema fields
// given (version → count; nil: counted from c's schemas), so that a CRD
// whose schemas the cache keeps packed needs them decoded only once.
func CRDDetailCounted(c *apiextensionsv1.CustomResourceDefinition, fields map[string]int, now time.Time) model.DetailPage {
	ageText, ageTitle, _ := age(c.CreationTimestamp, now)
	n := c.Spec.Names
	p := model.DetailPage{
		KindID: "crds", KindTitle: "CustomResourceDefinitions", Name: c.Name, Status: crdStatus(c),
		Fields: []model.Field{
			{Label: "Group", Value: c.Spec.Group, Mono: true},
			{Label: "Kind", Value: n.Kind},
			{Label: "Plural", Value: n.Plural, Mono: true},
			{Label: "Singular", Value: orDash(n.Singular), Mono: true},
			{Label: "Short names", Value: join(n.ShortNames), Mono: true},
			{Label: "Categories", Value: join(n.Categories)},
			{Label: "List kind", Value: orDash(n.ListKind)},
			{Label: "Scope", Value: string(c.Spec.Scope)},
			{Label: "Stored versions", Value: join(c.Status.StoredVersions), Hint: "status.storedVersions: versions objects may exist in etcd in"},
			{Label: "Age", Value: ageText, Hint: ageTitle},
		},
	}
	for _, f := range findings(crd.Lint(c, now)) {
		p.Problems = append(p.Problems, model.Banner{Tone: f.Tone, Title: f.Title, Message: f.Message, TestID: "finding-" + f.Code})
	}
	versions := crd.Versions(c)
	if fields != nil {
		for i := range versions {
			versions[i].Fields = fields[versions[i].Name]
		}
	}
	p.Insights = append(p.Insights, crdVersionsInsight(c, versions), crdConversionInsight(c), crdColumnsInsight(versions), crdSelectableFieldsInsight(versions))
	for _, cond := range c.Status.Conditions {
		a, t, _ := age(cond.LastTransitionTime, now)
		good := cond.Type != apiextensionsv1.Terminating && cond.Type != apiextensionsv1.NonStructuralSchema
		p.Conditions = append(p.Conditions, model.Condition{
			Type: string(cond.Type), Status: string(cond.Status), Tone: conditionTone(string(cond.Status), good),
			Reason: cond.Reason, Message: cond.Message, Age: a, Time: t,
		})
	}
	return p
}
