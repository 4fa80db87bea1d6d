package present

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func floodedLoad() *apfload.Load {
	return &apfload.Load{At: time.Unix(100, 0), Window: 10 * time.Second,
		Levels: map[string]apfload.LevelLoad{
			"workload-low": {HasLimits: true, NominalSeats: 3, ExecutingSeats: 3, Executing: 3, Waiting: 1, RejectedPerSecond: 35,
				Rejected: []apfload.ReasonRate{{Reason: "queue-full", PerSecond: 35, Total: 700}}, RejectedTotal: 700},
			"quiet": {HasLimits: true, NominalSeats: 10},
		},
		Schemas: map[string]apfload.SchemaLoad{
			"busy":  {PriorityLevel: "workload-low", Matched: true, DispatchedPerSecond: 0.5, RejectedPerSecond: 35, Rejected: []apfload.ReasonRate{{Reason: "queue-full", PerSecond: 35, Total: 700}}},
			"never": {PriorityLevel: "quiet"},
		}}
}

func TestClassifyLoadSentence(t *testing.T) {
	got, badges := ClassifyLoad("workload-low", floodedLoad())
	if !strings.HasPrefix(got, "This request lands in workload-low, which is rejecting 35/s") || len(badges) != 1 || badges[0].Tone != model.ToneError {
		t.Errorf("%q %v", got, badges)
	}
	got, badges = ClassifyLoad("quiet", floodedLoad())
	if !strings.Contains(got, "rejecting nothing") || badges != nil {
		t.Errorf("%q %v", got, badges)
	}
	first := floodedLoad()
	first.Window = 0
	if got, _ := ClassifyLoad("workload-low", first); strings.Contains(got, "/s") {
		t.Errorf("a rate before two reads: %q", got)
	}
}

func TestFlowSchemaLoadNeverMatched(t *testing.T) {
	for _, name := range []string{"never", "absent"} {
		sec := FlowSchemaLoadSection(name, floodedLoad())
		if len(sec.Fields) != 1 || sec.Fields[0].Value != "no request matched since the API server started" {
			t.Errorf("%s: %+v", name, sec.Fields)
		}
	}
	sec := FlowSchemaLoadSection("busy", floodedLoad())
	if sec.Fields[1].Value != "35/s" || len(sec.Fields[1].Badges) != 1 || !strings.Contains(sec.Fields[2].Value, "queue-full 35/s (700 in all)") {
		t.Errorf("busy: %+v", sec.Fields)
	}
}

func TestPriorityLevelListLoadColumns(t *testing.T) {
	page := model.ListPage{Columns: []model.Column{{Key: "name"}}, Rows: []model.Row{
		{Name: "workload-low", Cells: []model.Cell{{Text: "workload-low"}}},
		{Name: "gone", Cells: []model.Cell{{Text: "gone"}}},
	}}
	AddPriorityLevelLoad(&page, floodedLoad())
	if len(page.Columns) != 4 {
		t.Fatalf("columns %+v", page.Columns)
	}
	for _, r := range page.Rows {
		if len(r.Cells) != len(page.Columns) {
			t.Errorf("row %s has %d cells for %d columns", r.Name, len(r.Cells), len(page.Columns))
		}
	}
	if c := page.Rows[0].Cells; c[1].Text != "3 / 3" || c[2].Text != "1" || len(c[3].Badges) != 1 || c[3].Badges[0].Text != "rejecting 35/s" {
		t.Errorf("workload-low cells %+v", c)
	}
	// A level the read has no series for says when that read was, not just "—".
	if c := page.Rows[1].Cells[1]; c.Text != "—" || !strings.Contains(c.Title, "read of 00:01:40 UTC") || !strings.Contains(c.Title, "after the next read") {
		t.Errorf("level missing from the read: %+v", c)
	}
}

func TestLoadBanner(t *testing.T) {
	if b := (APFLoadState{Forbidden: true}).LoadBanner(); b.Message[:61] != "Your identity may not read /metrics, so load is not shown (Ku" {
		t.Errorf("forbidden: %q", b.Message)
	}
	if b := (APFLoadState{Err: apfload.ErrNoSample}).LoadBanner(); b.TestID != "apf-load-pending" {
		t.Errorf("pending: %+v", b)
	}
	if b := (APFLoadState{Err: errors.New("boom")}).LoadBanner(); !strings.Contains(b.Message, "boom") {
		t.Errorf("error: %+v", b)
	}
	if b := (APFLoadState{Load: floodedLoad(), Interval: 10 * time.Second}).LoadBanner(); !strings.Contains(b.Message, "per API server instance") {
		t.Errorf("note: %+v", b)
	}
}
