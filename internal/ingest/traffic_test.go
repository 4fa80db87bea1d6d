package ingest

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// trafficMem is a TrafficStore that keeps what it is given, or fails.
type trafficMem struct {
	ledger.TrafficStore
	mu      sync.Mutex
	buckets []ledger.TrafficBucket
	calls   int
	err     error
}

func (m *trafficMem) AppendTraffic(_ context.Context, b []ledger.TrafficBucket) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.err != nil {
		return m.err
	}
	m.buckets = append(m.buckets, b...)
	return nil
}

func postPath(rc http.Handler, path string, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+testToken)
	w := httptest.NewRecorder()
	rc.ServeHTTP(w, r)
	return w
}

// TestReceiverFoldsTrafficPerInstance: a batch posted under
// /apiservers/<instance> is folded into buckets of that instance in one
// AppendTraffic, every request of the batch counted once; / is an
// instance nobody named.
func TestReceiverFoldsTrafficPerInstance(t *testing.T) {
	tm := &trafficMem{}
	rc, err := NewReceiver(Options{Store: newMemStore(), Traffic: tm, Senders: Senders{Token: testToken}})
	if err != nil {
		t.Fatal(err)
	}
	body := eventsBody(t)
	if w := postPath(rc, "/apiservers/127.0.0.2:6443", body); w.Code != http.StatusOK {
		t.Fatalf("post: %d %s", w.Code, w.Body)
	}
	if w := postPath(rc, "/", body); w.Code != http.StatusOK {
		t.Fatalf("post to /: %d %s", w.Code, w.Body)
	}
	if tm.calls != 2 || len(tm.buckets) == 0 {
		t.Fatalf("%d appends of %d buckets, want one per batch", tm.calls, len(tm.buckets))
	}
	per := map[string]int64{}
	for _, b := range tm.buckets {
		per[b.Series.Instance] += b.Requests
		if b.Width != time.Second {
			t.Errorf("bucket of %s", b.Width)
		}
	}
	if per["127.0.0.2:6443"] == 0 || per["127.0.0.2:6443"] != per[""] || len(per) != 2 {
		t.Errorf("requests per instance: %v", per)
	}
}

// TestReceiverRefusesOtherPaths: any path but / and /apiservers/<name>
// with a plain name is 404, before anything is read.
func TestReceiverRefusesOtherPaths(t *testing.T) {
	tm := &trafficMem{}
	rc, err := NewReceiver(Options{Store: newMemStore(), Traffic: tm, Senders: Senders{Token: testToken}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/apiservers/", "/apiservers/a/b", "/apiservers/a%20b", "/apiservers/" + string(bytes.Repeat([]byte("a"), 254)), "/x"} {
		if w := postPath(rc, p, eventsBody(t)); w.Code != http.StatusNotFound {
			t.Errorf("POST %.40s: %d, want 404", p, w.Code)
		}
	}
	if tm.calls != 0 {
		t.Errorf("%d appends for refused paths", tm.calls)
	}
}

// TestReceiverRetriesABatchWhoseTrafficFails: 503 with Retry-After, so the
// API server sends the batch again.
func TestReceiverRetriesABatchWhoseTrafficFails(t *testing.T) {
	tm := &trafficMem{err: errors.New("disk full")}
	rc, err := NewReceiver(Options{Store: newMemStore(), Traffic: tm, Senders: Senders{Token: testToken}})
	if err != nil {
		t.Fatal(err)
	}
	w := postPath(rc, "/apiservers/a", eventsBody(t))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Errorf("a batch whose traffic failed: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
}
