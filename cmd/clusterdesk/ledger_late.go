package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// lateLedger is a shared ledger (PostgreSQL) that did not answer when the
// console started: the console starts anyway, since writes need only the
// API server, and keeps trying to open it. Until it opens, every call fails
// with why, so the pages and /readyz say so and the webhook answers 503
// (the API server retries); then it is the store.
type lateLedger struct {
	store   atomic.Pointer[ledger.Store]
	lastErr atomic.Pointer[error]
}

func openLate(ctx context.Context, dsn string, o ledger.Options, first error, log *slog.Logger) *lateLedger {
	l := &lateLedger{}
	l.lastErr.Store(&first)
	go func() {
		wait := time.Second
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			s, err := ledger.Open(ctx, dsn, o)
			if err == nil {
				l.store.Store(&s)
				log.Info("ledger open, late", "dsn", ledger.RedactDSN(dsn))
				return
			}
			l.lastErr.Store(&err)
			wait = min(2*wait, 30*time.Second)
		}
	}()
	return l
}

func (l *lateLedger) get() (ledger.Store, error) {
	if s := l.store.Load(); s != nil {
		return *s, nil
	}
	return nil, fmt.Errorf("ledger not open: %w", *l.lastErr.Load())
}

func (l *lateLedger) Append(ctx context.Context, e []ledger.Entry) (int, error) {
	s, err := l.get()
	if err != nil {
		return 0, err
	}
	return s.Append(ctx, e)
}

func (l *lateLedger) Query(ctx context.Context, q ledger.Query) (ledger.Page, error) {
	s, err := l.get()
	if err != nil {
		return ledger.Page{}, err
	}
	return s.Query(ctx, q)
}

func (l *lateLedger) Export(ctx context.Context, q ledger.Query, each func(ledger.Entry) error) error {
	s, err := l.get()
	if err != nil {
		return err
	}
	return s.Export(ctx, q, each)
}

func (l *lateLedger) Prune(ctx context.Context, before time.Time) (int64, error) {
	s, err := l.get()
	if err != nil {
		return 0, err
	}
	return s.Prune(ctx, before)
}

func (l *lateLedger) Stats(ctx context.Context) (ledger.Stats, error) {
	s, err := l.get()
	if err != nil {
		return ledger.Stats{}, err
	}
	return s.Stats(ctx)
}

func (l *lateLedger) Ping(ctx context.Context) error {
	s, err := l.get()
	if err != nil {
		return err
	}
	return s.Ping(ctx)
}

func (l *lateLedger) Close() error {
	if s := l.store.Load(); s != nil {
		return (*s).Close()
	}
	return nil
}

// PrunedForSize is the open store's count of entries its size bound pruned
// (0 until it opens).
func (l *lateLedger) PrunedForSize() int64 {
	if s := l.store.Load(); s != nil {
		if p, ok := (*s).(interface{ PrunedForSize() int64 }); ok {
			return p.PrunedForSize()
		}
	}
	return 0
}
