package ingest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

const testToken = "s3cret-token-of-the-api-server"

func newTestReceiver(t *testing.T, store *memStore, maxBody int64, inFlight int) *Receiver {
	t.Helper()
	rc, err := NewReceiver(Options{Store: store, Senders: Senders{Token: testToken}, MaxBody: maxBody, InFlight: inFlight})
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

func post(rc http.Handler, token string, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	rc.ServeHTTP(w, r)
	return w
}

func eventsBody(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/devcluster-events.json")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestReceiverRefusesAReceiverWithoutSenders(t *testing.T) {
	if _, err := NewReceiver(Options{Store: newMemStore()}); err == nil {
		t.Fatal("a receiver that checks no sender was built")
	}
}

// A batch is stored once however often the API server sends it, and only
// the console's kinds are kept.
func TestReceiverStoresABatchOnce(t *testing.T) {
	store := newMemStore()
	rc := newTestReceiver(t, store, 0, 0)
	body := eventsBody(t)
	for i := range 2 {
		if w := post(rc, testToken, body); w.Code != http.StatusOK {
			t.Fatalf("post %d: %d %s", i, w.Code, w.Body)
		}
	}
	if got := len(store.all()); got != 13 {
		t.Errorf("stored %d entries, want the 13 of the console's kinds", got)
	}
	c := rc.Counts()
	if c.Received != 28 || c.Stored != 13 || c.Duplicate != 13 || c.Ignored != 2 {
		t.Errorf("counts %+v", c)
	}
}

func TestReceiverRefusals(t *testing.T) {
	store := newMemStore()
	rc := newTestReceiver(t, store, 4096, 1)
	body := eventsBody(t) // 34 KiB: over this receiver's 4 KiB
	for _, tc := range []struct {
		name, token string
		body        []byte
		code        int
		reason      string
	}{
		{"no token", "", body, 401, RefusedUnauthenticated},
		{"wrong token", "s3cret-token-of-the-api-serveR", body, 401, RefusedUnauthenticated},
		{"a token's prefix", testToken[:10], body, 401, RefusedUnauthenticated},
		{"too large", testToken, body, 413, RefusedTooLarge},
		{"not JSON", testToken, []byte("<xml/>"), 400, RefusedBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := rc.Counts().Refused[tc.reason]
			if w := post(rc, tc.token, tc.body); w.Code != tc.code {
				t.Errorf("status %d, want %d", w.Code, tc.code)
			}
			if rc.Counts().Refused[tc.reason] != before+1 {
				t.Errorf("refusal %q not counted: %v", tc.reason, rc.Counts().Refused)
			}
		})
	}
	// A body without Content-Length (chunked) is cut at the limit too.
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(body)))
	r.ContentLength = -1
	r.Header.Set("Authorization", "Bearer "+testToken)
	w := httptest.NewRecorder()
	rc.ServeHTTP(w, r)
	if w.Code != 413 {
		t.Errorf("chunked oversized body: %d, want 413", w.Code)
	}
	if len(store.all()) != 0 {
		t.Errorf("refused batches stored %d entries", len(store.all()))
	}
}

// Beyond the batches in flight the receiver answers 429 with Retry-After at
// once (the API server retries); an unavailable ledger is a 503.
func TestReceiverBusyAndUnavailable(t *testing.T) {
	store := newMemStore()
	store.gate = make(chan struct{})
	rc := newTestReceiver(t, store, 0, 2)
	body := eventsBody(t)
	var wg sync.WaitGroup
	codes := make(chan int, 2)
	for range 2 {
		wg.Go(func() { codes <- post(rc, testToken, body).Code })
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(rc.slots) < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	w := post(rc, testToken, body)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Errorf("third batch in flight: %d, Retry-After %q; want 429 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	close(store.gate)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != 200 {
			t.Errorf("a batch in flight got %d", c)
		}
	}
	store.setDown(true)
	if w := post(rc, testToken, body); w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Errorf("ledger down: %d, Retry-After %q; want 503 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
