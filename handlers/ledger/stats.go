package ledger

import (
	"context"
	"sync"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// statsFor is how long the pages' header reuses the ledger's Stats: counting
// a million rows (SQLite's count(*) reads a whole index) would cost every page
// view more than its own query; a header a few seconds old says as much.
const statsFor = 15 * time.Second

// statsMemo keeps the last Stats the store gave, for statsFor.
type statsMemo struct {
	mu    sync.Mutex
	at    time.Time
	stats ledger.Stats
}

// get returns Stats no older than statsFor, asking the store when they are.
// An error is never kept: the next page asks again.
func (m *statsMemo) get(ctx context.Context, s ledger.Store, now time.Time) (ledger.Stats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.at.IsZero() && now.Sub(m.at) < statsFor {
		return m.stats, nil
	}
	st, err := s.Stats(ctx)
	if err != nil {
		return ledger.Stats{}, err
	}
	m.stats, m.at = st, now
	return st, nil
}
