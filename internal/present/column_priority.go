package present

import "github.com/clusterdesk/clusterdesk/views/model"

// columnPriorities says, per list, which columns give way in a narrow table
// (every other column is primary): a list must not scroll sideways in a
// 1280 px window and keep what an admin decides by in a 1024 px one. A
// column that gives way hides, and its value moves to the second line of the
// row's name cell (views/components/table.templ), so nothing is lost.
var columnPriorities = map[string]map[string]model.Priority{
	"csrs": {"age": model.SecondaryColumn, "requestor": model.SecondaryColumn, "duration": model.TertiaryColumn,
		"signer": model.SecondaryColumn},
	// Why pending gives way in a 1280 px window: its words then stand on the
	// request's second line, and the why= filter selects by it.
	"csrqueue": {"age": model.SecondaryColumn, "signer": model.SecondaryColumn, "requestor": model.SecondaryColumn,
		"duration": model.TertiaryColumn, "why": model.TertiaryColumn},
	"flowschemas": {"precedence": model.SecondaryColumn, "distinguisher": model.SecondaryColumn,
		"age": model.SecondaryColumn, "missingpl": model.TertiaryColumn},
	// The live load columns (seats, waiting, rejected) stay: they are why
	// an admin opens this list during an incident.
	"prioritylevels": {"shares": model.SecondaryColumn, "queues": model.TertiaryColumn, "handsize": model.TertiaryColumn,
		"queuelength": model.TertiaryColumn, "age": model.SecondaryColumn},
	"crds": {"group": model.SecondaryColumn, "scope": model.TertiaryColumn, "versions": model.TertiaryColumn,
		"age": model.SecondaryColumn},
	"validatingwebhooks": {"webhooks": model.SecondaryColumn, "age": model.SecondaryColumn},
	"mutatingwebhooks":   {"webhooks": model.SecondaryColumn, "age": model.SecondaryColumn},
	"validatingadmissionpolicies": {"params": model.SecondaryColumn, "checks": model.TertiaryColumn,
		"age": model.SecondaryColumn},
	"validatingadmissionpolicybindings": {"params": model.SecondaryColumn, "age": model.SecondaryColumn},
	"csidrivers": {"podinfo": model.SecondaryColumn, "capacity": model.SecondaryColumn, "tokens": model.TertiaryColumn,
		"republish": model.TertiaryColumn, "age": model.SecondaryColumn},
	"csrapprovalpolicies": {"age": model.SecondaryColumn},
	"priorityclasses": {"default": model.SecondaryColumn, "preemption": model.SecondaryColumn,
		"description": model.TertiaryColumn, "age": model.SecondaryColumn},
}

// columnPriority is how important column key of list kind is.
func columnPriority(kind, key string) model.Priority {
	return columnPriorities[kind][key]
}

// prioritize stamps a row's cells with their columns' priorities and labels,
// so the name cell can repeat what a narrow table hides (the first column,
// the name, is always shown).
func prioritize(cols []model.Column, cells []model.Cell) {
	for i := 1; i < len(cells) && i < len(cols); i++ {
		cells[i].Priority, cells[i].Label = cols[i].Priority, cols[i].Label
	}
}
