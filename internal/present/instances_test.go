package present

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestInstanceRows(t *testing.T) {
	table := &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name"},
			{Name: "Ready", Type: "string"},
			{Name: "Replicas", Type: "integer"},
			{Name: "Detail", Type: "string", Priority: 1}, // kubectl shows it only with -o wide
			{Name: "Age", Type: "date"},
		},
		Rows: []metav1.TableRow{
			{Cells: []any{"w1", "True", float64(3), "x", "5m"}, Object: runtime.RawExtension{Raw: []byte(`{"kind":"PartialObjectMetadata","metadata":{"name":"w1","namespace":"team-a"}}`)}},
			{Cells: []any{"w2", nil, 1.5}, Object: runtime.RawExtension{Raw: []byte(`{"metadata":{"name":"w2","namespace":"team-b"}}`)}},
		},
	}
	link := func(ns, name string) string { return "/x/" + ns + "/" + name }

	cols, rows, err := InstanceRows(table, true, link, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantCols := []string{"Name", "Namespace", "Ready", "Replicas", "Age"}
	var gotCols []string
	for _, c := range cols {
		gotCols = append(gotCols, c.Label)
	}
	if !reflect.DeepEqual(gotCols, wantCols) {
		t.Errorf("columns %v, want %v", gotCols, wantCols)
	}
	want := [][]string{{"w1", "team-a", "True", "3", "5m"}, {"w2", "team-b", "<none>", "1.5", "<none>"}}
	for i, r := range rows {
		var cells []string
		for _, c := range r.Cells {
			cells = append(cells, c.Text)
		}
		if !reflect.DeepEqual(cells, want[i]) {
			t.Errorf("row %d: %v, want %v", i, cells, want[i])
		}
	}
	if rows[0].Href != "/x/team-a/w1" || rows[1].Href != "/x/team-b/w2" {
		t.Errorf("links %q %q", rows[0].Href, rows[1].Href)
	}

	// One namespace (or a cluster-scoped CRD): no Namespace column.
	cols, rows, err = InstanceRows(table, false, link, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != 4 || len(rows[0].Cells) != 4 {
		t.Errorf("without namespaces: %d columns, %d cells", len(cols), len(rows[0].Cells))
	}

	// With tick boxes: each row's box names its object with the UID; a row
	// without one gets an empty cell, so the columns still line up.
	table.Rows[0].Object.Raw = []byte(`{"metadata":{"name":"w1","namespace":"team-a","uid":"u-1"}}`)
	tick := func(ns, name, uid string) string { return uid + "/" + ns + "/" + name }
	_, rows, err = InstanceRows(table, true, link, tick)
	if err != nil {
		t.Fatal(err)
	}
	if !rows[0].TickColumn || rows[0].Tick != "u-1/team-a/w1" || !rows[1].TickColumn || rows[1].Tick != "" {
		t.Errorf("ticks %+v / %+v", rows[0], rows[1])
	}

	table.Rows[0].Object.Raw = []byte(`{not json`)
	if _, _, err := InstanceRows(table, false, link, nil); err == nil {
		t.Error("a row whose object does not decode gave no error")
	}
}

func TestCellText(t *testing.T) {
	for _, tt := range []struct {
		in   any
		want string
	}{
		{nil, "<none>"}, {"s", "s"}, {true, "true"}, {float64(42), "42"}, {0.25, "0.25"}, {int64(-7), "-7"},
		{[]any{"a", "b"}, `["a","b"]`}, {map[string]any{"k": "v"}, `{"k":"v"}`},
	} {
		if got := CellText(tt.in); got != tt.want {
			t.Errorf("CellText(%#v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
