package present

import (
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/clusterdesk/clusterdesk/internal/crd"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func yesNo(b bool, yes model.Badge) model.Rich {
	if b {
		return model.Rich{Badges: []model.Badge{yes}}
	}
	return model.Rich{Text: "no"}
}

// crdVersionsInsight is the versions table: what is served, which version
// new objects are stored in, which ones objects may still exist in, and a
// link to each schema.
func crdVersionsInsight(c *apiextensionsv1.CustomResourceDefinition, versions []crd.Version) model.Insight {
	t := &model.RichTable{
		Columns: []string{"Version", "Served", "Storage", "Stored", "Deprecated", "Subresources", "Printer columns", "Schema"},
		Empty:   "No versions.",
	}
	for _, v := range versions {
		stored := yesNo(v.Stored, model.Badge{Text: "stored", Tone: model.ToneNeutral, Hint: "listed in status.storedVersions"})
		if v.Stored && !v.Served {
			stored.Badges = []model.Badge{{Text: "stored, not served", Tone: model.ToneWarning, Hint: "objects may exist in this version, which clients can no longer read: migrate them"}}
		}
		dep := model.Rich{Text: "no"}
		if v.Deprecated {
			dep = model.Rich{Badges: []model.Badge{{Text: "deprecated", Tone: model.ToneWarning, Hint: v.DeprecationWarning}}, Text: v.DeprecationWarning}
		}
		sub := model.Rich{Text: join(v.Subresources)}
		if v.Scale != nil {
			sub.Lines = []string{"spec replicas " + v.Scale.SpecReplicasPath, "status replicas " + v.Scale.StatusReplicasPath}
			if v.Scale.LabelSelectorPath != "" {
				sub.Lines = append(sub.Lines, "label selector "+v.Scale.LabelSelectorPath)
			}
		}
		schema := model.Rich{Text: "no schema"}
		if v.Schema {
			schema = model.Rich{Text: "explore " + strconv.Itoa(v.Fields) + " fields", Href: urls.CRDSchema(c.Name, v.Name, "")}
		}
		t.Rows = append(t.Rows, model.RichRow{TestID: "version-row", Cells: []model.Rich{
			{Text: v.Name, Mono: true},
			yesNo(v.Served, model.Badge{Text: "served", Tone: model.ToneOK}),
			yesNo(v.Storage, model.Badge{Text: "storage", Tone: model.ToneNeutral, Hint: "new objects are written in this version"}),
			stored, dep, sub,
			{Text: strconv.Itoa(len(v.PrinterColumns))},
			schema,
		}})
	}
	return model.Insight{Title: "Versions", TestID: "versions", Table: t,
		Intro: "Served versions can be read and written; objects are stored in the storage version; stored versions are those objects may still exist in."}
}

// crdConversionInsight explains spec.conversion.
func crdConversionInsight(c *apiextensionsv1.CustomResourceDefinition) model.Insight {
	conv := crd.ConversionOf(c)
	in := model.Insight{Title: "Conversion", TestID: "conversion", Fields: []model.RichField{
		{Label: "Strategy", Value: model.Rich{Text: conv.Strategy},
			Hint: "None only changes apiVersion between versions; Webhook asks a webhook to convert."},
	}}
	if conv.Strategy == string(apiextensionsv1.WebhookConverter) {
		in.Fields = append(in.Fields,
			model.RichField{Label: "Target", Value: model.Rich{Text: orDash(conv.Target), Mono: true}, Hint: "Where the API server sends ConversionReviews."},
			model.RichField{Label: "Review versions", Value: model.Rich{Text: orDash(conv.ReviewVersions), Mono: true}},
			model.RichField{Label: "CA bundle", Value: model.Rich{Text: orDash(conv.CABundle)}})
	}
	return in
}

// crdSelectableFieldsInsight lists every version's selectableFields: the
// fields a field selector may name for these objects (Kubernetes 1.30 beta,
// GA in 1.32; metadata.name and metadata.namespace always are).
func crdSelectableFieldsInsight(versions []crd.Version) model.Insight {
	t := &model.RichTable{Columns: []string{"Version", "JSON path", "Field selector"},
		Empty: "None: field selectors may name only metadata.name and metadata.namespace."}
	for _, v := range versions {
		for _, f := range v.SelectableFields {
			t.Rows = append(t.Rows, model.RichRow{TestID: "selectable-field-row", Cells: []model.Rich{
				{Text: v.Name, Mono: true}, {Text: f, Mono: true}, {Text: "--field-selector " + strings.TrimPrefix(f, ".") + "=…", Mono: true},
			}})
		}
	}
	return model.Insight{Title: "Selectable fields", TestID: "selectable-fields", Table: t,
		Intro: "spec.versions[].selectableFields: fields that list and watch requests may filter on with a field selector (Kubernetes 1.30+, GA in 1.32)."}
}

// crdColumnsInsight lists every version's additionalPrinterColumns.
func crdColumnsInsight(versions []crd.Version) model.Insight {
	t := &model.RichTable{Columns: []string{"Version", "Name", "Type", "JSON path", "Priority", "Description"},
		Empty: "None: kubectl shows only NAME and AGE."}
	for _, v := range versions {
		for _, pc := range v.PrinterColumns {
			typ := pc.Type
			if pc.Format != "" {
				typ += " (" + pc.Format + ")"
			}
			prio := "0 (always shown)"
			if pc.Priority > 0 {
				prio = strconv.Itoa(int(pc.Priority)) + " (-o wide)"
			}
			t.Rows = append(t.Rows, model.RichRow{TestID: "printer-column-row", Cells: []model.Rich{
				{Text: v.Name, Mono: true}, {Text: pc.Name}, {Text: typ}, {Text: pc.JSONPath, Mono: true}, {Text: prio},
				{Text: strings.Join(strings.Fields(pc.Description), " ")},
			}})
		}
	}
	return model.Insight{Title: "Printer columns", TestID: "printer-columns", Table: t}
}
