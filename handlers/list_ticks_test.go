package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// ticksCluster is a cache holding CSIDrivers and FlowSchemas of the same
// names, each with a uid.
type ticksCluster struct {
	fixtureCluster
	schemas map[string]*flowcontrolv1.FlowSchema
}

func newTicksCluster(names ...string) ticksCluster {
	c := ticksCluster{fixtureCluster{drivers: map[string]*storagev1.CSIDriver{}}, map[string]*flowcontrolv1.FlowSchema{}}
	for _, n := range names {
		c.drivers[n] = &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: n, UID: types.UID("uid-" + n), CreationTimestamp: metav1.Now()}}
		c.schemas[n] = &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: n, UID: types.UID("uid-" + n), CreationTimestamp: metav1.Now()},
			Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "global-default"}}}
	}
	return c
}

func (c ticksCluster) FlowSchemas() ([]*flowcontrolv1.FlowSchema, error) {
	var out []*flowcontrolv1.FlowSchema
	for _, fs := range c.schemas {
		out = append(out, fs)
	}
	return out, nil
}

func (c ticksCluster) PriorityLevels() ([]*flowcontrolv1.PriorityLevelConfiguration, error) {
	return nil, nil
}

func (c ticksCluster) Meta(id kube.KindID, name string) (metav1.Object, error) {
	if fs, ok := c.schemas[name]; ok && id == kube.FlowSchemas {
		return fs, nil
	}
	return c.fixtureCluster.Meta(id, name)
}

func (c ticksCluster) Status(id kube.KindID) kube.KindStatus {
	k, _ := c.Kind(id)
	return kube.KindStatus{Kind: k, State: kube.StateSynced, Count: len(c.drivers)}
}

func (c ticksCluster) CSIDrivers() ([]*storagev1.CSIDriver, error) {
	var out []*storagev1.CSIDriver
	for _, d := range c.drivers {
		out = append(out, d)
	}
	return out, nil
}

// listTicks gets the CSIDriver list (as htmx when fragment) and returns its
// tick boxes' values and labels, and whether "Delete selected…" is offered.
func listTicks(t *testing.T, readOnly, fragment bool) (values, labels []string, button bool, cols, cells int) {
	return kindTicks(t, kube.CSIDrivers, readOnly, fragment)
}

func kindTicks(t *testing.T, kind kube.KindID, readOnly, fragment bool) (values, labels []string, button bool, cols, cells int) {
	values, labels, button, cols, cells, _ = kindTicksAs(t, kind, readOnly, fragment, allowAll{})
	return values, labels, button, cols, cells
}

// kindTicksAs is kindTicks for a user with access; hidden reports that the
// list hides its tick column (data-ticks-off).
func kindTicksAs(t *testing.T, kind kube.KindID, readOnly, fragment bool, access Access) (values, labels []string, button bool, cols, cells int, hidden bool) {
	t.Helper()
	ts := newTestServerOf(t, readOnly, newTicksCluster("d-a", "d-b"), access)
	r := httptest.NewRequest(http.MethodGet, urls.List(kind), nil)
	r.AddCookie(ts.login(t))
	if fragment {
		r.Header.Set("HX-Request", "true")
	}
	rec := ts.do(r)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	d := doc(t, rec.Body.Bytes())
	d.Find(`input[type=checkbox][data-testid=row-tick]`).Each(func(_ int, s *goquery.Selection) {
		if s.AttrOr("name", "") != "names" || s.AttrOr("form", "") != "list-ticks" {
			t.Errorf("tick box %s is not a names field of the list-ticks form", s.AttrOr("value", ""))
		}
		values = append(values, s.AttrOr("value", ""))
		labels = append(labels, s.AttrOr("aria-label", ""))
	})
	form := d.Find(`form#list-ticks[method=post]`)
	button = form.Find(`[data-testid=bulk-delete]`).Length() == 1 &&
		form.AttrOr("action", "") == urls.Cleanup(kind) && form.Find(`input[name=_csrf]`).AttrOr("value", "") != ""
	cols = d.Find("[data-testid=data-table] thead th").Length()
	cells = d.Find("tr#row-" + string(kind) + "-d-a").Children().Length()
	hidden = d.Find(`#list-table[data-ticks-off]`).Length() == 1
	return values, labels, button, cols, cells, hidden
}

// allowAllButDelete is a user who may do anything but delete.
type allowAllButDelete struct{}

func (allowAllButDelete) Can(_ context.Context, verb, _, _, _, _ string) (bool, error) {
	return verb != "delete", nil
}

// A user who may not delete the kind gets no "Delete selected…" and sees no
// tick column. A generic list keeps the column in the markup, hidden, so
// that live rows (the same for every viewer) still line up with the header;
// the FlowSchema list (re-fetched on change, no shared rows) leaves it out.
// A user who may delete sees it.
func TestTickColumnHiddenFromWhoMayNotDelete(t *testing.T) {
	for kind, boxes := range map[kube.KindID]int{kube.CSIDrivers: 2, kube.FlowSchemas: 0} {
		values, _, button, cols, cells, hidden := kindTicksAs(t, kind, false, false, allowAllButDelete{})
		if button || (boxes > 0 && !hidden) || len(values) != boxes || cols != cells {
			t.Errorf("%s, no delete right: button %v, hidden %v, %d boxes, %d columns, %d cells", kind, button, hidden, len(values), cols, cells)
		}
		_, _, button, _, _, hidden = kindTicksAs(t, kind, false, false, allowAll{})
		if !button || hidden {
			t.Errorf("%s, may delete: button %v, hidden %v", kind, button, hidden)
		}
	}
}

// The list's rows carry tick boxes (uid/name, labelled with the name) and
// "Delete selected…" posts them to the cleanup preview; the header has the
// tick column too, so a row has as many cells as the header columns.
func TestListRowsCarryTickBoxesWhenCleanupIsOffered(t *testing.T) {
	for _, fragment := range []bool{false, true} {
		values, labels, button, cols, cells := listTicks(t, false, fragment)
		if strings.Join(values, " ") != "uid-d-a/d-a uid-d-b/d-b" {
			t.Errorf("fragment=%v: tick values %q", fragment, values)
		}
		if strings.Join(labels, "|") != "Select d-a|Select d-b" {
			t.Errorf("fragment=%v: tick labels %q", fragment, labels)
		}
		if !button {
			t.Errorf("fragment=%v: no \"Delete selected…\" form posting to the cleanup preview with a CSRF token", fragment)
		}
		if cols != cells {
			t.Errorf("fragment=%v: %d header columns, %d cells in a row", fragment, cols, cells)
		}
	}
}

// The FlowSchema list renders its own rows: they carry the boxes too.
func TestFlowSchemaRowsCarryTickBoxes(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		values, labels, button, cols, cells := kindTicks(t, kube.FlowSchemas, readOnly, false)
		want := "uid-d-a/d-a uid-d-b/d-b"
		if readOnly {
			want = ""
		}
		if strings.Join(values, " ") != want || button == readOnly {
			t.Errorf("readOnly=%v: tick values %q (labels %q), button %v", readOnly, values, labels, button)
		}
		if cols != cells || cols == 0 {
			t.Errorf("readOnly=%v: %d header columns, %d cells in a row", readOnly, cols, cells)
		}
	}
}

// Read-only mode offers no cleanup: no boxes, no button, no tick column.
func TestReadOnlyListRowsCarryNoTickBoxes(t *testing.T) {
	values, _, button, cols, cells := listTicks(t, true, false)
	if len(values) != 0 || button {
		t.Errorf("read-only list has %d tick boxes, button %v", len(values), button)
	}
	if cols != cells || cols == 0 {
		t.Errorf("%d header columns, %d cells in a row", cols, cells)
	}
}

// A read-only kind's list offers no tick boxes either.
func TestReadOnlyKindsAreNotTickable(t *testing.T) {
	for _, kp := range kinds.All() {
		if kp.ReadOnly && page.Tickable(false, kp.ID) {
			t.Errorf("read-only kind %s is tickable", kp.ID)
		}
	}
	if !page.Tickable(false, kube.CSIDrivers) || page.Tickable(true, kube.CSIDrivers) {
		t.Error("CSIDrivers: tickable only when the console is not read-only")
	}
}

// A live row carries the same tick cell as the page's rows, so the table's
// header and live rows agree; read-only, neither has it.
func TestLiveRowsCarryTheTickCell(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		lv := NewLiveUpdates(newTicksCluster("d-a"), nil).ReadOnly(readOnly)
		msgs := byTopic(lv.Render(kube.CSIDrivers, []string{"d-a"}, false))
		row := doc(t, msgs[rowsTopic(kube.CSIDrivers)].Data).Find("tr#row-csidrivers-d-a")
		_, _, _, cols, cells := listTicks(t, readOnly, false)
		if got := row.Children().Length(); got != cols || got != cells {
			t.Errorf("readOnly=%v: live row has %d cells, the page %d columns", readOnly, got, cols)
		}
		box := row.Find("input[type=checkbox]")
		if readOnly != (box.Length() == 0) || !readOnly && box.AttrOr("value", "") != "uid-d-a/d-a" {
			t.Errorf("readOnly=%v: live row's boxes: %d, value %q", readOnly, box.Length(), box.AttrOr("value", ""))
		}
	}
}
