package components

import "github.com/clusterdesk/clusterdesk/views/model"

// Column priorities are container queries on the table's panel (@container):
// the table's own width decides, whatever the window and the navigation take.
// @4xl is 56rem (896 px, a 1280 px window beside the navigation), @5xl 64rem.

// ColumnClass hides a column's header and cells when its table is too narrow
// for it.
func ColumnClass(p model.Priority) string {
	switch p {
	case model.SecondaryColumn:
		return "@max-4xl:hidden"
	case model.TertiaryColumn:
		return "@max-5xl:hidden"
	}
	return ""
}

// FactClass shows a column's value on the name cell's second line exactly
// when ColumnClass hides the column.
func FactClass(p model.Priority) string {
	switch p {
	case model.SecondaryColumn:
		return "@4xl:hidden"
	case model.TertiaryColumn:
		return "@5xl:hidden"
	}
	return "hidden"
}

// hasFacts reports whether any cell of a row may move to its second line.
func hasFacts(cells []model.Cell) bool {
	for i, c := range cells {
		if i > 0 && c.Priority != model.PrimaryColumn {
			return true
		}
	}
	return false
}
