package ledger_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// The attack of issue 43 (class 3) on the store: exports whose reader
// stopped (each blocks, as the handler's write to a client that never
// reads) are more than either pool has connections (PostgreSQL's 8,
// SQLite's 4 readers). They must hold none of them while they wait: Ping,
// a page's Query and the webhook's Append still answer. A store that
// streams an export from one long cursor keeps a connection per export,
// and the exports past the pool never even start.
func TestStalledExportsHoldNoConnection(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, ledger.Options{})
		var all []ledger.Entry
		for i := range 300 { // several of an export's pages
			all = append(all, entry(fmt.Sprintf("e%04d", i), i))
		}
		appendAll(t, s, all...)

		const stalled = 12
		release := make(chan struct{})
		var waiting atomic.Int32
		var exports sync.WaitGroup
		for range stalled {
			exports.Go(func() {
				first := true
				_ = s.Export(context.Background(), ledger.Query{}, func(ledger.Entry) error {
					if first {
						first = false
						waiting.Add(1)
						<-release
					}
					return nil
				})
			})
		}
		defer func() { close(release); exports.Wait() }()
		for deadline := time.Now().Add(10 * time.Second); waiting.Load() < stalled; {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d exports got their first rows: the others wait for a connection the stalled ones hold", waiting.Load(), stalled)
			}
			time.Sleep(10 * time.Millisecond) // polling the condition, bounded above
		}

		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Ping(ctx); err != nil {
			t.Errorf("Ping beside %d stalled exports: %v", stalled, err)
		}
		if p, err := s.Query(ctx, ledger.Query{Limit: 1}); err != nil || len(p.Entries) != 1 {
			t.Errorf("Query beside %d stalled exports: %v", stalled, err)
		}
		if n, err := s.Append(ctx, []ledger.Entry{entry("appended", 1000)}); err != nil || n != 1 {
			t.Errorf("Append beside %d stalled exports: %d, %v", stalled, n, err)
		}
	})
}
