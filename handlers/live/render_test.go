package live

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/handlers/internal/livetest"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// queueRows is the kind registry as these tests need it: the CSR queue
// has rows of its own (csr.go); no other kind has rows, ticks or load.
type queueRows struct{}

func (queueRows) Row(kind kube.KindID, _ string, _ time.Time) (model.Row, bool, error) {
	return model.Row{}, false, fmt.Errorf("no rows for %s in this registry", kind)
}
func (queueRows) OwnRows(kind kube.KindID) bool                                       { return kind == kube.CSRs }
func (queueRows) Tickable(kube.KindID) bool                                           { return false }
func (queueRows) Metrics(kube.KindID) func(model.Row, present.APFLoadState) model.Row { return nil }

// newUpdates is the renderer over cl without a stream server.
func newUpdates(cl *livetest.Cluster) *Updates { return NewUpdates(cl, nil, queueRows{}) }

// fakeCSR is a request as the API server holds it (livetest.CSR).
var fakeCSR = livetest.CSR

const apiClientSigner = certificatesv1.KubeAPIServerClientSignerName

// doc parses a fragment, byEvent keys a batch's messages by event (livetest).
var (
	doc     = livetest.Doc
	byEvent = livetest.ByEvent
)

func TestLiveRenderRowsOnceWithRemovals(t *testing.T) {
	cl := livetest.NewCluster("csr-a", "csr-b")
	lv := newUpdates(cl)
	msgs := byEvent(lv.Render(kube.CSRs, []string{"csr-a", "csr-gone"}, false))

	rows, ok := msgs["csrs-rows"]
	if !ok || rows.Topic != "csrs-rows" || rows.Sticky {
		t.Fatalf("rows message %+v", rows)
	}
	d := doc(t, rows.Data)
	if a := d.Find("tr#row-csrs-csr-a"); a.Length() != 1 || !strings.Contains(a.Text(), "example.com/live") {
		t.Fatalf("changed row missing or wrong: %q", rows.Data)
	}
	if d.Find("tr#row-csrs-csr-gone[data-live-removed]").Length() != 1 {
		t.Fatalf("deleted object not marked removed: %q", rows.Data)
	}
	if d.Find("tr#row-csrs-csr-b").Length() != 0 {
		t.Fatalf("unchanged row sent: %q", rows.Data)
	}
	// The queue's own rows (csr_test.go), with the count line per state tab.
	if got := strings.TrimSpace(d.Find(`[data-csr-live-tabs] [data-tab="all"] [data-testid=list-count]`).Text()); !strings.Contains(got, "of 2") {
		t.Fatalf("count line %q", got)
	}

	count, ok := msgs["csrs"]
	if !ok || !count.Sticky {
		t.Fatalf("count message %+v", count)
	}
	cd := doc(t, count.Data)
	if cd.Find("#nav-count-csrs").Text() != "2" || cd.Find("#list-total-csrs").Text() != "2" {
		t.Fatalf("count fragment %q", count.Data)
	}
	// The count did not change: the next batch does not repeat it.
	if _, again := byEvent(lv.Render(kube.CSRs, []string{"csr-a"}, false))["csrs"]; again {
		t.Fatal("unchanged count published again")
	}
}

func TestLiveRenderStaleBannerAndRecovery(t *testing.T) {
	cl := livetest.NewCluster("csr-a")
	lv := newUpdates(cl)
	lv.now = func() time.Time { return time.Date(2026, 1, 2, 14, 3, 12, 0, time.UTC) }

	cl.SetState(kube.CSRs, kube.KindStatus{State: kube.StateError, Err: errors.New("connection refused"), SyncedAt: time.Now()})
	msgs := byEvent(lv.Render(kube.CSRs, nil, true))
	status, ok := msgs["status"]
	if !ok || !status.Sticky {
		t.Fatalf("no status message: %+v", msgs)
	}
	banner := doc(t, status.Data).Find("#live-status [data-testid=banner-stale]")
	if banner.Length() != 1 || !strings.Contains(banner.Text(), "14:03:12") || !strings.Contains(banner.Text(), "connection refused") {
		t.Fatalf("stale banner %q", status.Data)
	}
	if nav := doc(t, msgs["csrs"].Data).Find("#nav-count-csrs"); nav.AttrOr("hidden", "none") == "none" {
		t.Errorf("a stale count should be hidden, as the nav hides it: %q", msgs["csrs"].Data)
	}
	if b := lv.StaleBanners(); len(b) != 1 {
		t.Errorf("pages rendered now should show the banner: %+v", b)
	}

	cl.SetState(kube.CSRs, kube.KindStatus{State: kube.StateSynced, Count: 1, SyncedAt: time.Now()})
	msgs = byEvent(lv.Render(kube.CSRs, nil, true))
	if s := msgs["status"]; doc(t, s.Data).Find("[data-testid=banner-stale]").Length() != 0 {
		t.Fatalf("banner still there after recovery: %q", s.Data)
	}
	if r, ok := msgs[live.ResyncEvent]; !ok || string(r.Data) != "csrs-rows" || r.Topic != "csrs-rows" {
		t.Fatalf("recovery must resync the rows: %+v", msgs)
	}
}

func TestLiveRenderLargeBatchIsAResync(t *testing.T) {
	lv := newUpdates(livetest.NewCluster())
	names := make([]string, MaxRows+1)
	for i := range names {
		names[i] = "csr-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
	}
	msgs := byEvent(lv.Render(kube.CSRs, names, false))
	if _, ok := msgs[live.ResyncEvent]; !ok {
		t.Fatalf("messages %+v", msgs)
	}
	if _, ok := msgs["csrs-rows"]; ok {
		t.Fatal("rendered the rows as well")
	}
}
