package ingest

import "sync/atomic"

// Why the receiver refused a batch: a fixed set, so the metric's labels stay
// bounded whatever a client sends.
const (
	RefusedUnauthenticated = "unauthenticated" // 401
	RefusedTooLarge        = "too_large"       // 413
	RefusedBusy            = "busy"            // 429: every batch slot taken
	RefusedBadRequest      = "bad_request"     // 400/404/405: not an EventList POST
	RefusedUnavailable     = "unavailable"     // 503: the ledger did not commit
)

// RefusedReasons lists every refusal reason, in a stable order.
var RefusedReasons = []string{RefusedUnauthenticated, RefusedTooLarge, RefusedBusy, RefusedBadRequest, RefusedUnavailable}

// Counts are the receiver's totals since start.
type Counts struct {
	// Received events in accepted batches; Stored the new ones committed;
	// Duplicate those already stored (a retried batch); Ignored those the
	// ledger does not keep (other resources, reads); AnonymousRefused the
	// refused writes of clients that did not authenticate, counted only
	// (anonymousRefusal).
	Received, Stored, Duplicate, Ignored, AnonymousRefused int64
	// Writes are the recorded writes stored (new ones, Options.Writes).
	Writes  int64
	Refused map[string]int64 // batches, by reason
}

type counters struct {
	received, stored, duplicate, ignored, anonymousRefused, writes atomic.Int64
	refused                                                        [5]atomic.Int64 // by index in RefusedReasons
}

func (c *counters) refuse(reason string) {
	for i, r := range RefusedReasons {
		if r == reason {
			c.refused[i].Add(1)
		}
	}
}

func (c *counters) snapshot() Counts {
	s := Counts{Received: c.received.Load(), Stored: c.stored.Load(), Duplicate: c.duplicate.Load(),
		Ignored: c.ignored.Load(), AnonymousRefused: c.anonymousRefused.Load(), Writes: c.writes.Load(), Refused: map[string]int64{}}
	for i, r := range RefusedReasons {
		s.Refused[r] = c.refused[i].Load()
	}
	return s
}

// EventCounts and RefusedBatches are the receiver's metrics
// (metrics.LedgerWebhookSource).
func (rc *Receiver) EventCounts() (received, stored, duplicate, ignored int64) {
	return rc.c.received.Load(), rc.c.stored.Load(), rc.c.duplicate.Load(), rc.c.ignored.Load()
}

// AnonymousRefused is how many refused writes of unauthenticated clients
// were counted and not stored.
func (rc *Receiver) AnonymousRefused() int64 { return rc.c.anonymousRefused.Load() }

// RefusedBatches is how many batches were refused for reason.
func (rc *Receiver) RefusedBatches(reason string) int64 {
	for i, r := range RefusedReasons {
		if r == reason {
			return rc.c.refused[i].Load()
		}
	}
	return 0
}
