package present

import (
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/clusterdesk/clusterdesk/views/model"
)

var crdColumns = []column{
	{"name", "Name", true},
	{"group", "Group", true},
	{"kind", "Kind", true},
	{"scope", "Scope", true},
	{"versions", "Versions", false},
	{"established", "Established", true},
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

func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) string {
	for _, c := range crd.Status.Conditions {
		if c.Type == t {
			return string(c.Status)
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
	const kind, action = "crds", "/crds"
	rows := make([]row, 0, len(items))
	for _, crd := range items {
		ageC, ageKey := ageCell(crd.CreationTimestamp, now)
		status := crdStatus(crd)
		rows = append(rows, newRow(kind, action, crd.Name, []model.Cell{
			{Text: crd.Spec.Group, Mono: true},
			{Text: crd.Spec.Names.Kind},
			{Text: string(crd.Spec.Scope)},
			{Text: crdVersions(crd)},
			{Badges: []model.Badge{status}},
			ageC,
		}, []string{crd.Spec.Group, crd.Spec.Names.Kind, string(crd.Spec.Scope), "", status.Text, ageKey}))
	}
	return table(kind, "CustomResourceDefinitions", action, crdColumns, rows, q)
}

// CRDDetail lays out one CustomResourceDefinition.
func CRDDetail(crd *apiextensionsv1.CustomResourceDefinition, now time.Time) model.DetailPage {
	ageText, ageTitle, _ := age(crd.CreationTimestamp, now)
	n := crd.Spec.Names
	conversion := "None"
	if crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy != "" {
		conversion = string(crd.Spec.Conversion.Strategy)
	}
	p := model.DetailPage{
		KindID: "crds", KindTitle: "CustomResourceDefinitions", Name: crd.Name, Status: crdStatus(crd),
		Fields: []model.Field{
			{Label: "Group", Value: crd.Spec.Group, Mono: true},
			{Label: "Kind", Value: n.Kind},
			{Label: "Plural", Value: n.Plural, Mono: true},
			{Label: "Singular", Value: orDash(n.Singular), Mono: true},
			{Label: "Short names", Value: join(n.ShortNames), Mono: true},
			{Label: "Categories", Value: join(n.Categories)},
			{Label: "Scope", Value: string(crd.Spec.Scope)},
			{Label: "Conversion", Value: conversion},
			{Label: "Stored versions", Value: join(crd.Status.StoredVersions)},
			{Label: "Age", Value: ageText, Hint: ageTitle},
		},
	}
	versions := model.Section{Title: "Versions", TestID: "versions", Columns: []string{"Version", "Served", "Storage", "Deprecated", "Subresources"}}
	for _, v := range crd.Spec.Versions {
		var sub []string
		if v.Subresources != nil {
			if v.Subresources.Status != nil {
				sub = append(sub, "status")
			}
			if v.Subresources.Scale != nil {
				sub = append(sub, "scale")
			}
		}
		dep := boolText(&v.Deprecated, "")
		if v.Deprecated && v.DeprecationWarning != nil {
			dep += ": " + *v.DeprecationWarning
		}
		versions.Rows = append(versions.Rows, []string{v.Name, boolText(&v.Served, ""), boolText(&v.Storage, ""), dep, join(sub)})
	}
	p.Sections = append(p.Sections, versions)
	served := map[string]bool{}
	for _, v := range crd.Spec.Versions {
		served[v.Name] = v.Served
	}
	for _, sv := range crd.Status.StoredVersions {
		if !served[sv] {
			p.Problems = append(p.Problems, model.Banner{Tone: model.ToneWarning, Title: "Stored version not served",
				Message: "Objects may still be stored as " + sv + ", which is no longer served: migrate them before removing it.", TestID: "banner-stored-version"})
		}
	}
	for _, c := range crd.Status.Conditions {
		a, t, _ := age(c.LastTransitionTime, now)
		good := c.Type != apiextensionsv1.Terminating && c.Type != apiextensionsv1.NonStructuralSchema
		p.Conditions = append(p.Conditions, model.Condition{
			Type: string(c.Type), Status: string(c.Status), Tone: conditionTone(string(c.Status), good),
			Reason: c.Reason, Message: c.Message, Age: a, Time: t,
		})
	}
	return p
}
