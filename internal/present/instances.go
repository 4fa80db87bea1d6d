package present

import (
	"encoding/json"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/views/model"
)

// InstanceRows lays out the API server's Table of custom resources: the
// columns it defines for the default view (priority 0, as kubectl prints
// them: for a CRD, Name, its additionalPrinterColumns and Age), with a
// Namespace column after the name when withNamespace, each row linking to
// linkOf(namespace, name) from the row's object metadata. With tickOf, rows
// have a tick-box column, each box valued tickOf(namespace, name, uid).
func InstanceRows(t *metav1.Table, withNamespace bool, linkOf func(namespace, name string) string, tickOf func(namespace, name, uid string) string) ([]model.Column, []model.Row, error) {
	var keep []int
	var cols []model.Column
	for i, c := range t.ColumnDefinitions {
		if c.Priority != 0 {
			continue
		}
		keep = append(keep, i)
		cols = append(cols, model.Column{Key: c.Name, Label: c.Name})
		if len(keep) == 1 && withNamespace {
			cols = append(cols, model.Column{Key: "Namespace", Label: "Namespace"})
		}
	}
	rows := make([]model.Row, 0, len(t.Rows))
	for i, r := range t.Rows {
		var m metav1.PartialObjectMetadata
		if len(r.Object.Raw) > 0 {
			if err := json.Unmarshal(r.Object.Raw, &m); err != nil {
				return nil, nil, fmt.Errorf("row %d of the API server's table: %w", i, err)
			}
		}
		row := model.Row{Name: m.Name, ID: "cr-" + m.Namespace + "-" + m.Name}
		if m.Name != "" {
			row.Href = linkOf(m.Namespace, m.Name)
		}
		if tickOf != nil {
			row.TickColumn = true
			if m.Name != "" && m.UID != "" {
				row.Tick = tickOf(m.Namespace, m.Name, string(m.UID))
			}
		}
		for j, ci := range keep {
			var v any
			if ci < len(r.Cells) {
				v = r.Cells[ci]
			}
			row.Cells = append(row.Cells, model.Cell{Text: CellText(v), Mono: j == 0})
			if j == 0 && withNamespace {
				row.Cells = append(row.Cells, model.Cell{Text: m.Namespace, Mono: true})
			}
		}
		rows = append(rows, row)
	}
	instancePriorities(cols)
	for _, r := range rows {
		prioritize(cols, r.Cells)
	}
	return cols, rows, nil
}

// instancePriorities lets a CRD's printer columns give way in a narrow
// table: the first four columns (name, namespace, the first printer
// columns) stay, later ones hide, and the ones past the sixth, and Age, go
// first.
func instancePriorities(cols []model.Column) {
	for i := range cols {
		switch {
		case i == 0:
		case cols[i].Key == "Age" || i >= 6:
			cols[i].Priority = model.TertiaryColumn
		case i >= 4:
			cols[i].Priority = model.SecondaryColumn
		}
	}
}

// CellText prints one Table cell as kubectl does: nothing as <none>, whole
// numbers without a fraction, lists and objects as JSON.
func CellText(v any) string {
	switch x := v.(type) {
	case nil:
		return "<none>"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	j, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(j)
}
