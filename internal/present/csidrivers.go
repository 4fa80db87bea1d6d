package present

import (
	"time"

	storagev1 "k8s.io/api/storage/v1"

	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/internal/usage"
	"github.com/clusterdesk/clusterdesk/views/model"
)

var csiDriverColumns = []column{
	{"name", "Name", true},
	{"attach", "Attach required", true},
	{"podinfo", "Pod info on mount", true},
	{"capacity", "Storage capacity", true},
	{"tokens", "Token requests", false},
	{"republish", "Requires republish", true},
	{"modes", "Modes", true},
	{"fsgroup", "FSGroup policy", true},
	{"age", "Age", true},
}

func csiModes(d *storagev1.CSIDriver) string {
	modes := make([]string, 0, len(d.Spec.VolumeLifecycleModes))
	for _, m := range d.Spec.VolumeLifecycleModes {
		modes = append(modes, string(m))
	}
	return join(modes)
}

func csiTokens(d *storagev1.CSIDriver) string {
	var out []string
	for _, t := range d.Spec.TokenRequests {
		out = append(out, t.Audience)
	}
	return join(out)
}

func fsGroupPolicy(d *storagev1.CSIDriver) string {
	if d.Spec.FSGroupPolicy == nil {
		return "<unset>"
	}
	return string(*d.Spec.FSGroupPolicy)
}

// CSIDriverList lays out the CSIDriver list page.
func CSIDriverList(items []*storagev1.CSIDriver, q ListQuery, now time.Time) model.ListPage {
	const kind = "csidrivers"
	action := urls.List(kind)
	rows := make([]row, 0, len(items))
	for _, d := range items {
		ageC, ageKey := ageCell(d.CreationTimestamp, now)
		cells := []string{
			boolText(d.Spec.AttachRequired, "<unset>"),
			boolText(d.Spec.PodInfoOnMount, "<unset>"),
			boolText(d.Spec.StorageCapacity, "<unset>"),
			csiTokens(d),
			boolText(d.Spec.RequiresRepublish, "<unset>"),
			csiModes(d),
			fsGroupPolicy(d),
		}
		mc := make([]model.Cell, 0, len(cells)+1)
		for _, c := range cells {
			mc = append(mc, model.Cell{Text: c})
		}
		mc = append(mc, ageC)
		rows = append(rows, newRow(kind, action, d.Name, mc, append(cells, ageKey)))
	}
	return table(kind, "CSIDrivers", action, csiDriverColumns, rows, q)
}

// CSIDriverDetail lays out one CSIDriver: every spec field explained, the
// immutable ones marked, and, when users is not nil, the objects that use it.
func CSIDriverDetail(d *storagev1.CSIDriver, users *usage.Driver, now time.Time) model.DetailPage {
	ageText, ageTitle, _ := age(d.CreationTimestamp, now)
	p := model.DetailPage{
		KindID: "csidrivers", KindTitle: "CSIDrivers", Name: d.Name,
		Status: model.Badge{Text: "Registered", Tone: model.ToneNeutral},
		Fields: []model.Field{
			{Label: "Attach required", Value: boolText(d.Spec.AttachRequired, "<unset>")},
			{Label: "Volume lifecycle modes", Value: csiModes(d)},
			{Label: "FSGroup policy", Value: fsGroupPolicy(d)},
			{Label: "Age", Value: ageText, Hint: ageTitle},
		},
	}
	p.Insights = append(p.Insights, csiSpecInsight(d), csiUsageInsight(users))
	return p
}
