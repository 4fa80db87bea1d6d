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

// lintCounts is how many danger (error) and warning findings an object has;
// notes are not counted.
type lintCounts struct {
	Danger, Warning int
	// Drift is a CRD's stored-version drift (crd.IsDrift), for the list's
	// lint=drift filter.
	Drift bool
}

func countFindings(fs []admission.Finding) lintCounts {
	var c lintCounts
	for _, f := range fs {
		switch f.Severity {
		case admission.Error:
			c.Danger++
		case admission.Warning:
			c.Warning++
		}
	}
	return c
}

func (c lintCounts) add(o lintCounts) lintCounts {
	return lintCounts{c.Danger + o.Danger, c.Warning + o.Warning, c.Drift || o.Drift}
}

// cell shows the counts as badges ("2 danger", "1 warning"), or "none". Its
// sort key orders by danger, then warnings, so a descending sort puts the
// objects most worth a look first.
func (c lintCounts) cell() (model.Cell, string) {
	key := fmt.Sprintf("%06d%06d", c.Danger, c.Warning)
	if c.Danger == 0 && c.Warning == 0 {
		return model.Cell{Text: "none", Title: "No danger or warning findings (the detail page also checks what needs lookups)"}, key
	}
	var cell model.Cell
	if c.Danger > 0 {
		cell.Badges = append(cell.Badges, model.Badge{Text: strconv.Itoa(c.Danger) + " danger", Tone: model.ToneError,
			Hint: plural(c.Danger, "danger finding", "danger findings") + ": see the detail page"})
	}
	if c.Warning > 0 {
		cell.Badges = append(cell.Badges, model.Badge{Text: plural(c.Warning, "warning", "warnings"), Tone: model.ToneWarning,
			Hint: plural(c.Warning, "warning", "warnings") + ": see the detail page"})
	}
	return cell, key
}
