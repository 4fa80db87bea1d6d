package present

import (
	"fmt"
	"strconv"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// lintColumn is the list column that counts a row's danger and warning
// findings: the lints of the object's detail page that need no lookups.
var lintColumn = column{"lints", "Lints", true}

// lintCell shows a row's lint tally as badges ("2 danger", "1 warning"), or
// "none". Its sort key orders by danger, then warnings, so a descending sort
// puts the objects most worth a look first.
func lintCell(t admission.Tally) (model.Cell, string) {
	key := fmt.Sprintf("%06d%06d", t.Errors, t.Warnings)
	if t.Errors == 0 && t.Warnings == 0 {
		return model.Cell{Text: "none", Title: "No danger or warning findings (the detail page also checks what needs lookups)"}, key
	}
	var cell model.Cell
	if t.Errors > 0 {
		cell.Badges = append(cell.Badges, model.Badge{Text: strconv.Itoa(t.Errors) + " danger", Tone: model.ToneError,
			Hint: plural(t.Errors, "danger finding", "danger findings") + ": see the detail page"})
	}
	if t.Warnings > 0 {
		cell.Badges = append(cell.Badges, model.Badge{Text: plural(t.Warnings, "warning", "warnings"), Tone: model.ToneWarning,
			Hint: plural(t.Warnings, "warning", "warnings") + ": see the detail page"})
	}
	return cell, key
}
