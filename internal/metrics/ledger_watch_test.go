package metrics_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/ingest"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/metrics"
)

// The watch feed's dropped and stored versions read in /metrics: a feed of
// one queued event drops the second, then stores what it runs.
func TestLedgerWatchVersionsInMetricsText(t *testing.T) {
	store, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	feed := ingest.NewWatchFeed(store, 1, nil)
	r := metrics.New()
	r.RegisterLedgerWatch(feed)

	added := func(name string) kube.ObjectChange {
		return kube.ObjectChange{Kind: kube.CSIDrivers, New: &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1"}}}
	}
	feed.Enqueue(added("kept"))
	feed.Enqueue(added("dropped")) // the queue of one is full: not Run yet
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { feed.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	want := []string{
		`clusterdesk_ledger_watch_versions_total{outcome="dropped"} 1`,
		`clusterdesk_ledger_watch_versions_total{outcome="stored"} 1`,
	}
	var text string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		rec := httptest.NewRecorder()
		r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		text = rec.Body.String()
		if strings.Contains(text, want[0]) && strings.Contains(text, want[1]) {
			return
		}
		if time.Now().After(deadline) {
			break
		}
	}
	t.Fatalf("after 10 s /metrics does not read %q:\n%s", want, grepLines(text, "ledger_watch"))
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
