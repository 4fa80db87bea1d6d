package present

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func instanceLoad(rejected float64) *apfload.Load {
	return &apfload.Load{Window: 10 * time.Second, Levels: map[string]apfload.LevelLoad{
		"workload-low": {RejectedPerSecond: rejected, Rejected: []apfload.ReasonRate{{Reason: "queue-full", PerSecond: rejected, Total: 10 * rejected}}},
	}}
}

// The pages say which instance rejects, the quiet ones, and the one that did
// not answer (unknown, not zero).
func TestInstanceRatesNameTheRejectingInstance(t *testing.T) {
	ld := &apfload.Load{Window: 10 * time.Second,
		Levels: map[string]apfload.LevelLoad{"workload-low": {RejectedPerSecond: 40, Rejected: []apfload.ReasonRate{{Reason: "queue-full", PerSecond: 40, Total: 400}}}},
		Instances: []apfload.InstanceLoad{
			{Name: "10.0.0.1:6443", Load: instanceLoad(0)},
			{Name: "10.0.0.2:6443", Load: instanceLoad(40)},
			{Name: "10.0.0.3:6443", Load: instanceLoad(0)},
			{Name: "10.0.0.4:6443", Err: errors.New("context deadline exceeded")},
		}}
	got := instanceRates(ld, levelRejected("workload-low"))
	want := "40/s on 10.0.0.2, 0/s on the others, 10.0.0.4 did not answer (its load is unknown, not zero)"
	if got != want {
		t.Errorf("instanceRates = %q, want %q", got, want)
	}
	msg, badges := ClassifyLoad("workload-low", ld)
	if !strings.Contains(msg, "By API server instance: rejecting 40/s on 10.0.0.2") || len(badges) == 0 {
		t.Errorf("classifier: %q %v", msg, badges)
	}
	banner := APFLoadState{Load: ld, Interval: 10 * time.Second}.LoadBanner()
	if !strings.Contains(banner.Message, "Each of the 4 API server instances") || !strings.Contains(banner.Title, "did not answer") {
		t.Errorf("banner: %+v", banner)
	}

	one := &apfload.Load{Window: 10 * time.Second, Fallback: "no API server instance answered at its own address (10.96.0.1:443: dial tcp: i/o timeout)",
		Levels: ld.Levels}
	if by := instanceRates(one, levelRejected("workload-low")); by != "" {
		t.Errorf("fallback load has per-instance rates %q", by)
	}
	if m := (APFLoadState{Load: one}).LoadBanner().Message; !strings.Contains(m, "one API server instance's") || !strings.Contains(m, "i/o timeout") {
		t.Errorf("fallback banner: %q", m)
	}
}

// The priority level list shows, under a rejecting level's total, which
// instance rejects; a level rejecting nothing, and a load of one instance,
// get no second line.
func TestPriorityLevelListShowsTheRejectingInstance(t *testing.T) {
	ld := &apfload.Load{Window: 10 * time.Second,
		Levels: map[string]apfload.LevelLoad{
			"workload-low": {RejectedPerSecond: 54, Rejected: []apfload.ReasonRate{{Reason: "queue-full", PerSecond: 54, Total: 540}}},
			"catch-all":    {},
		},
		Instances: []apfload.InstanceLoad{
			{Name: "127.0.0.1:6443", Load: instanceLoad(0)},
			{Name: "127.0.0.2:6443", Load: instanceLoad(54)},
			{Name: "127.0.0.3:6443", Err: errors.New("connection refused")},
		}}
	page := model.ListPage{Rows: []model.Row{{Name: "workload-low", Cells: []model.Cell{{Text: "workload-low"}}}, {Name: "catch-all", Cells: []model.Cell{{Text: "catch-all"}}}}}
	AddPriorityLevelLoad(&page, ld)
	rejected := func(i int) model.Cell { c := page.Rows[i].Cells; return c[len(c)-1] }
	if got, want := rejected(0).Note, "54/s on 127.0.0.2, 0/s on 127.0.0.1"; got != want {
		t.Errorf("rejecting level's note %q, want %q", got, want)
	}
	if !strings.Contains(rejected(0).Title, "127.0.0.3 did not answer") {
		t.Errorf("title %q should name the instance that did not answer", rejected(0).Title)
	}
	if n := rejected(1).Note; n != "" {
		t.Errorf("a level rejecting nothing has a note %q", n)
	}
	ld.Instances = ld.Instances[1:2] // one instance answers: its number is the total
	page.Rows[0].Cells = page.Rows[0].Cells[:1]
	page.Columns = nil
	AddPriorityLevelLoad(&page, ld)
	if n := rejected(0).Note; n != "" {
		t.Errorf("with one instance, note %q", n)
	}
}

// Webhook health has a row per instance below the webhook's total: the
// instance that measured the slow calls, and the one that did not answer.
func TestWebhookHealthRowPerInstance(t *testing.T) {
	key := apfload.WebhookKey{Type: apfload.TypeValidating, Name: "w.example.com"}
	inst := func(p99 float64) *apfload.Load {
		return &apfload.Load{Window: 10 * time.Second, Webhooks: map[apfload.WebhookKey]apfload.WebhookLoad{key: {RequestsPerSecond: 1, Calls: 10, P50: p99 / 2, P99: p99}}}
	}
	ld := &apfload.Load{Window: 10 * time.Second, Webhooks: map[apfload.WebhookKey]apfload.WebhookLoad{key: {RequestsPerSecond: 2, Calls: 20, P50: 0.01, P99: 2}},
		Instances: []apfload.InstanceLoad{
			{Name: "10.0.0.1:6443", Load: inst(0.01)},
			{Name: "10.0.0.2:6443", Load: inst(2)},
			{Name: "10.0.0.3:6443", Err: errors.New("context deadline exceeded")},
		}}
	cfg := admission.Config{Kind: admission.Validating, Hooks: []admission.Hook{{Name: "w.example.com"}}}
	in := WebhookHealthInsight(cfg, APFLoadState{Load: ld, Allowed: true, Interval: 10 * time.Second})
	if !strings.Contains(in.Title, "all 3 API server instances") {
		t.Errorf("title %q", in.Title)
	}
	if in.Table == nil || len(in.Table.Rows) != 4 {
		t.Fatalf("rows: %+v, want the webhook and one per instance", in.Table)
	}
	slow, down := in.Table.Rows[2].Cells, in.Table.Rows[3].Cells
	if slow[0].Text != "on 10.0.0.2" || slow[3].Text != "2.00 s" {
		t.Errorf("second instance row: %+v", slow)
	}
	if down[0].Text != "on 10.0.0.3" || !strings.Contains(down[1].Text, "did not answer") {
		t.Errorf("unreachable instance row: %+v", down)
	}
}
