package ingest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// memStore is a tiny in-memory ledger.Store for this package's tests (the
// real stores are internal/ledger's): Append keeps (Source, ID) unique;
// gate, when set, holds every Append until it is closed; down fails them;
// refuse, when set, fails a batch holding an entry it accepts while Ping
// still answers (a batch the database refuses for its data).
type memStore struct {
	mu      sync.Mutex
	entries []ledger.Entry
	keys    map[[2]string]bool
	gate    chan struct{}
	down    bool
	refuse  func(ledger.Entry) bool
	appends int
}

func newMemStore() *memStore { return &memStore{keys: map[[2]string]bool{}} }

var (
	errDown    = errors.New("memStore: down")
	errRefused = errors.New("memStore: refused the batch's data")
)

func (m *memStore) Append(ctx context.Context, entries []ledger.Entry) (int, error) {
	m.mu.Lock()
	gate, down := m.gate, m.down
	m.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	if down {
		return 0, errDown
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.appends++
	for _, e := range entries {
		if m.refuse != nil && m.refuse(e) {
			return 0, errRefused
		}
	}
	added := 0
	for _, e := range entries {
		k := [2]string{e.Source, e.ID}
		if m.keys[k] {
			continue
		}
		m.keys[k] = true
		m.entries = append(m.entries, e)
		added++
	}
	return added, nil
}

func (m *memStore) all() []ledger.Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]ledger.Entry(nil), m.entries...)
}

func (m *memStore) setDown(down bool) {
	m.mu.Lock()
	m.down = down
	m.mu.Unlock()
}

func (m *memStore) Query(context.Context, ledger.Query) (ledger.Page, error) {
	return ledger.Page{Entries: m.all()}, nil
}

func (m *memStore) Export(ctx context.Context, _ ledger.Query, each func(ledger.Entry) error) error {
	for _, e := range m.all() {
		if err := each(e); err != nil {
			return err
		}
	}
	return nil
}

func (m *memStore) Prune(context.Context, time.Time) (int64, error) { return 0, nil }
func (m *memStore) Stats(context.Context) (ledger.Stats, error) {
	return ledger.Stats{Backend: "memory", Entries: int64(len(m.all()))}, nil
}
func (m *memStore) Ping(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errDown
	}
	return nil
}
func (m *memStore) Close() error { return nil }
