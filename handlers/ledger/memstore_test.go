package ledger

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
	"github.com/clusterdesk/clusterdesk/internal/testwait"
)

// memStore is a small in-memory ledger.Store for the views' unit tests (the
// real stores are internal/ledger's; the integration tests use them). Its
// cursor is "m<index>" into the query's sorted result, so a forged one is
// refused with ledger.ErrBadCursor as a real store refuses it.
type memStore struct {
	mu        sync.Mutex
	entries   []ledger.Entry
	pingErr   error
	queryErr  error
	exportErr error // returned by Export after the first entry
	// exporting, when set, receives a value as each Export starts, which
	// then waits for release to close (an export whose client is slow).
	exporting chan struct{}
	release   chan struct{}
	retention time.Duration
	queries   []ledger.Query // every Query asked, for assertions
	csr       testfixtures.CSRStory
}

func (m *memStore) Append(_ context.Context, es []ledger.Entry) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	added := 0
	for _, e := range es {
		if slices.ContainsFunc(m.entries, func(o ledger.Entry) bool { return o.Source == e.Source && o.ID == e.ID }) {
			continue
		}
		m.entries = append(m.entries, e)
		added++
	}
	return added, nil
}

func (m *memStore) match(q ledger.Query) []ledger.Entry {
	var out []ledger.Entry
	for _, e := range m.entries {
		switch {
		case q.Kind != "" && e.Kind != q.Kind, q.Name != "" && e.Name != q.Name, q.UID != "" && e.UID != q.UID,
			q.User != "" && e.User != q.User, q.Signer != "" && e.Signer != q.Signer,
			len(q.Actions) > 0 && !slices.Contains(q.Actions, e.Action), q.Result != "" && e.Result != q.Result,
			q.Source != "" && e.Source != q.Source, !q.Since.IsZero() && e.Time.Before(q.Since),
			!q.Until.IsZero() && !e.Time.Before(q.Until), q.Kinds != nil && !slices.Contains(q.Kinds, e.Kind),
			q.FoldHousekeeping && ledger.IsHousekeeping(e):
			continue
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b ledger.Entry) int {
		if q.Oldest {
			return a.Time.Compare(b.Time)
		}
		return b.Time.Compare(a.Time)
	})
	return out
}

func (m *memStore) Query(_ context.Context, q ledger.Query) (ledger.Page, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queries = append(m.queries, q)
	if m.queryErr != nil {
		return ledger.Page{}, m.queryErr
	}
	start := 0
	if q.After != "" {
		n, ok := strings.CutPrefix(q.After, "m")
		i, err := strconv.Atoi(n)
		if !ok || err != nil || i < 0 {
			return ledger.Page{}, errors.Join(ledger.ErrBadCursor, errors.New("cursor "+q.After))
		}
		start = i
	}
	limit := q.Limit
	if limit == 0 {
		limit = ledger.DefaultLimit
	}
	all := m.match(q)
	if start > len(all) {
		start = len(all)
	}
	end := min(start+limit, len(all))
	p := ledger.Page{Entries: all[start:end]}
	if end < len(all) {
		p.Next = "m" + strconv.Itoa(end)
	}
	return p, nil
}

func (m *memStore) Export(ctx context.Context, q ledger.Query, each func(ledger.Entry) error) error {
	m.mu.Lock()
	all := m.match(q)
	m.mu.Unlock()
	if m.exporting != nil {
		m.exporting <- struct{}{}
		// Bounded: a test that fails before its release leaves no export held for good.
		select {
		case <-m.release:
		case <-time.After(testwait.Within):
		}
	}
	for i, e := range all {
		if m.exportErr != nil && i == 1 {
			return m.exportErr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := each(e); err != nil {
			return err
		}
	}
	return nil
}

func (m *memStore) Prune(context.Context, time.Time) (int64, error) {
	return 0, errors.New("the views never prune")
}

func (m *memStore) Stats(context.Context) (ledger.Stats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := ledger.Stats{Backend: "sqlite", Entries: int64(len(m.entries)), Retention: m.retention}
	for _, e := range m.entries {
		if s.Oldest.IsZero() || e.Time.Before(s.Oldest) {
			s.Oldest = e.Time
		}
	}
	return s, nil
}

func (m *memStore) Ping(context.Context) error { return m.pingErr }
func (m *memStore) Close() error               { return nil }
