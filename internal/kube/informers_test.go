package kube

import (
	"io"
	"log/slog"
	"testing"
	"time"
)

func TestStreamsInitialLists(t *testing.T) {
	for v, want := range map[string]bool{
		"v1.28.15":         false, // WatchList alpha, off
		"v1.31.0":          false,
		"v1.32.4":          true,  // beta, on
		"v1.33.4":          false, // off again
		"v1.34.0":          true,
		"v1.36.3":          true,
		"v1.36.3-gke.1200": true,
		"":                 false, // not discovered
		"garbage":          false,
	} {
		if got := streamsInitialLists(v); got != want {
			t.Errorf("streamsInitialLists(%q) = %v, want %v", v, got, want)
		}
	}
}

// A server whose version streams initial lists but whose WatchList gate was
// turned off refuses the watch-list request: the informers fall back to a
// plain LIST (client-go's reflector) and every kind syncs.
func TestCacheFallsBackToListWhenWatchListRefused(t *testing.T) {
	api := &fakeAPI{
		version: "v1.36.3",
		groups: map[string][]string{
			"certificates.k8s.io": {"v1"}, "apiextensions.k8s.io": {"v1"}, "storage.k8s.io": {"v1"}, "scheduling.k8s.io": {"v1"},
			"admissionregistration.k8s.io": {"v1"}, "flowcontrol.apiserver.k8s.io": {"v1"},
		},
		items: map[string][]any{
			"certificatesigningrequests": {map[string]any{"metadata": map[string]any{"name": "csr-a"}}},
		},
	}
	c, err := NewCache(newFakeAPI(t, api), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c)
	waitFor(t, 10*time.Second, "Ready", c.Ready)
	for _, st := range c.Statuses() {
		if st.State != StateSynced {
			t.Errorf("%s: %s %v, want synced", st.Kind.ID, st.State, st.Err)
		}
	}
	if csrs, err := c.CSRs(); err != nil || len(csrs) != 1 {
		t.Errorf("CSRs: %v, %v; want csr-a", csrs, err)
	}
	api.mu.Lock()
	tries := api.watchListTries
	api.mu.Unlock()
	if tries == 0 {
		t.Error("no watch-list request: a v1.36 server is asked to stream its initial lists")
	}
}
