package ingest

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// DefaultConsoleQueue bounds the console's records waiting for the ledger.
const DefaultConsoleQueue = 4096

// consoleBatch is how many queued records one Append takes at most.
const consoleBatch = 128

// ConsoleFeed appends the console's own write records (audit.Record, with
// the diff and the approver's reason) to the ledger as SourceConsole
// entries. Record never blocks the request that made the write: a full
// queue drops the record and counts it, since the API server's audit stream
// still has the write itself. A ledger that fails keeps the batch in hand
// and retries it while new records queue behind it, for as long as the
// database does not answer; a batch that fails consoleAttempts times while
// the database answers is discarded (counted, logged), so that no batch can
// hold up the records behind it forever (issue 43).
type ConsoleFeed struct {
	store ledger.Store
	log   *slog.Logger
	queue chan ledger.Entry
	// what names the entries in the log: the console's records, or the
	// watch's observed versions (WatchFeed feeds its entries through one).
	what string

	stored, dropped, failed, discarded atomic.Int64
	// firstBackoff is the wait after a failed Append (doubling to 30 s): a
	// second; shorter in tests.
	firstBackoff time.Duration
}

// consoleAttempts is how often a batch is tried while the database answers.
// The store sets aside an entry it refuses for its data (ledger.Store's
// Append), so such a batch is a fault nobody foresaw: a few tries, with the
// backoff about half a minute, tell it from a passing one.
const consoleAttempts = 5

// NewConsoleFeed returns a feed with a queue of size records (default
// DefaultConsoleQueue); call Run to append them.
func NewConsoleFeed(store ledger.Store, size int, log *slog.Logger) *ConsoleFeed {
	if size <= 0 {
		size = DefaultConsoleQueue
	}
	if log == nil {
		log = slog.Default()
	}
	return &ConsoleFeed{store: store, log: log, queue: make(chan ledger.Entry, size), firstBackoff: time.Second, what: "the console's records"}
}

// Record queues rec; it is an audit.Recorder observer (OnRecord). A record
// of an object that is none of the console's kinds is not stored
// (ConsoleEntry).
func (f *ConsoleFeed) Record(rec audit.Record) {
	if e, ok := ConsoleEntry(rec); ok {
		f.add(e)
	}
}

// add queues e without blocking; a full queue drops it (counted).
func (f *ConsoleFeed) add(e ledger.Entry) {
	select {
	case f.queue <- e:
	default:
		if f.dropped.Add(1) == 1 {
			f.log.Warn("ledger: the queue of " + f.what + " is full, dropping them (the API server's audit events still reach the ledger)")
		}
	}
}

// Stored, Dropped, Failed and Discarded count records appended, dropped on
// a full queue, failed Appends (each retried), and records of batches given
// up after consoleAttempts while the database answered.
func (f *ConsoleFeed) Stored() int64    { return f.stored.Load() }
func (f *ConsoleFeed) Dropped() int64   { return f.dropped.Load() }
func (f *ConsoleFeed) Failed() int64    { return f.failed.Load() }
func (f *ConsoleFeed) Discarded() int64 { return f.discarded.Load() }

// Run appends queued records until ctx ends, then what is queued for up to
// 5 s more.
func (f *ConsoleFeed) Run(ctx context.Context) {
	batch := make([]ledger.Entry, 0, consoleBatch)
	backoff := f.firstBackoff
	attempts := 0
	for {
		if len(batch) == 0 {
			select {
			case <-ctx.Done():
				f.drain()
				return
			case e := <-f.queue:
				batch = append(batch, e)
			}
		}
		batch = f.fill(batch)
		if err := f.append(ctx, batch); err != nil {
			if f.failed.Add(1) == 1 {
				f.log.Warn("ledger: cannot store "+f.what+"; retrying", "err", err)
			}
			// A timeout is a slow database, not a bad batch.
			if !errors.Is(err, context.DeadlineExceeded) {
				attempts++
			}
			if attempts >= consoleAttempts && f.answers(ctx) {
				f.discarded.Add(int64(len(batch)))
				f.log.Error("ledger: the database answers but kept refusing a batch of "+f.what+"; discarded it (the API server's audit events still have the writes)",
					"err", err, "records", len(batch), "attempts", attempts)
				batch, attempts, backoff = batch[:0], 0, f.firstBackoff
				continue
			}
			select {
			case <-ctx.Done():
				f.drain()
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 30*time.Second)
			continue
		}
		backoff, attempts = f.firstBackoff, 0
		batch = batch[:0]
	}
}

// answers tells whether the database answers: a batch failing while it does
// is the batch's fault, not the database's.
func (f *ConsoleFeed) answers(ctx context.Context) bool {
	pctx, cancel := context.WithTimeout(ctx, appendTimeout)
	defer cancel()
	return f.store.Ping(pctx) == nil
}

// fill adds what is queued to batch, up to consoleBatch, without waiting.
func (f *ConsoleFeed) fill(batch []ledger.Entry) []ledger.Entry {
	for len(batch) < consoleBatch {
		select {
		case e := <-f.queue:
			batch = append(batch, e)
		default:
			return batch
		}
	}
	return batch
}

func (f *ConsoleFeed) append(ctx context.Context, batch []ledger.Entry) error {
	actx, cancel := context.WithTimeout(ctx, appendTimeout)
	defer cancel()
	if _, err := f.store.Append(actx, batch); err != nil {
		return err
	}
	f.stored.Add(int64(len(batch)))
	return nil
}

func (f *ConsoleFeed) drain() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		batch := f.fill(make([]ledger.Entry, 0, consoleBatch))
		if len(batch) == 0 || f.append(ctx, batch) != nil {
			return
		}
	}
}

// ConsoleEntry maps one of the console's write records to a ledger entry,
// or reports false when the ledger does not keep it: a record of an object
// that is none of the console's kinds.
//
// The kind is the record's API group and resource (kube.KindByResource), as
// Entry maps the API server's events, never the kind's name: a CRD of any
// group may call its kind CertificateSigningRequest, and its objects' writes
// would join a real CSR's history. Records of other objects (custom
// resources, edited on the CRD pages) are not stored at all, as Entry keeps
// no event of them: no ledger page lists or shows them, and an entry no page
// shows is one nobody reviews, kept for the retention period all the same.
// The console's JSON audit line and the API server's own audit log have
// them (the console's record of a custom resource carries no diff:
// handlers/edit_audit.go).
func ConsoleEntry(rec audit.Record) (ledger.Entry, bool) {
	k, ok := kube.KindByResource(rec.APIGroup, rec.Resource)
	if !ok {
		return ledger.Entry{}, false
	}
	e := ledger.Entry{
		Source: ledger.SourceConsole,
		ID:     rec.ID,
		Time:   rec.Time.UTC(),
		User:   rec.User,
		Groups: rec.Groups,
		Name:   rec.Name,
		UID:    rec.UID,
		Result: rec.Result,
		Reason: rec.Reason,
		Signer: rec.Signer,
		DryRun: rec.DryRun,
		Diff:   rec.Diff,
		Code:   rec.Status,
		RV:     rec.RVAfter,

		Kind: string(k.ID), APIGroup: k.Group, Resource: k.Resource,
	}
	if _, v, ok := cutLast(rec.APIVersion, '/'); ok {
		e.APIVersion = v
	} else {
		e.APIVersion = rec.APIVersion
	}
	// The record's verb is the console's word; the entry keeps the API verb
	// and the subresource it went through, and the word as its Action.
	switch rec.Verb {
	case "approve", "deny":
		e.Verb, e.Subresource, e.Action = "update", "approval", rec.Verb
		if rec.Result == audit.ResultOK {
			e.Policy = policyOf(rec.Reason, rec.DryRun)
		}
	case "issue":
		e.Verb, e.Subresource, e.Action = "update", "status", ledger.ActionIssue
	case "create", "delete":
		e.Verb, e.Action = rec.Verb, rec.Verb
	default:
		e.Verb, e.Action = rec.Verb, ledger.ActionUpdate
	}
	if e.Code == 0 && e.Result == ledger.ResultOK {
		e.Code = 200
	}
	if rec.Result != audit.ResultOK && rec.Error != "" {
		e.Reason = joinReason(rec.Reason, rec.Error)
	}
	return e, true
}

func cutLast(s string, sep byte) (before, after string, found bool) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func joinReason(reason, msg string) string {
	if reason == "" {
		return msg
	}
	return reason + " — " + msg
}
