package ledger

import (
	"context"
	"time"
)

// Recorded writes (issue 45): every write the API server's audit webhook
// reports at RequestResponse, of any resource, with the object as admission
// saw it and the object before it, kept for days so that an admission
// change can be replayed against them before it is applied
// (internal/replay). They are not ledger entries: the ledger tells the
// console's kinds' history for a year, these are the cluster's traffic for
// a week, read in one order by one reader.

// Admission operations of a recorded write, as admission spells them
// (k8s.io/apiserver/pkg/admission.Operation).
const (
	OpCreate = "CREATE"
	OpUpdate = "UPDATE"
	OpDelete = "DELETE"
)

// DefaultWriteRetention is how long recorded writes are kept by default:
// "last week's traffic", the question the replay answers.
const DefaultWriteRetention = 7 * 24 * time.Hour

// Write is one recorded write.
type Write struct {
	// Seq orders the writes as they were stored; set when read.
	Seq int64
	// ID is the SHA-256 of the audit event as received: a write of one of the
	// console's kinds has a ledger entry of source apiserver with this ID.
	ID      string
	AuditID string
	Time    time.Time
	// User, UserUID and Groups are the request's user (the impersonated one
	// when the request impersonated).
	User    string
	UserUID string
	Groups  []string
	Verb    string // create, update, patch, delete
	// Operation is the admission operation (Op*): a patch or an update that
	// created the object (201) is a CREATE, as admission saw it.
	Operation   string
	APIGroup    string
	APIVersion  string
	Resource    string
	Subresource string
	Namespace   string
	Name        string
	Code        int
	DryRun      bool
	// Object is the object as admission saw it, JSON; nil when unknown (a
	// refused patch: only the patch was sent) or none (a delete).
	Object []byte
	// ObjectDropped: the object was larger than MaxObjectBytes and not kept.
	ObjectDropped bool
	// OldObject is the object before the write (read, never stored: the
	// previous recorded applied write of the same object); nil for a create,
	// for a write of a subresource of another kind (a Scale: its before was
	// the old Scale), or when that write was not recorded (before the
	// window, or pruned). A subresource write of another kind is no later
	// write's OldObject (carriesTheObject).
	OldObject []byte
	// Refusal is the API server's message when it refused the write (Code
	// 400 or more), at most MaxRefusalBytes; "" otherwise and for writes
	// recorded before it was kept.
	Refusal string
	// Annotations are the audit event's annotations: the API server's
	// admission decisions (validation.policy.admission.k8s.io/validation_failure
	// among them) and the policies' audit annotations.
	Annotations map[string]string
}

// MaxRefusalBytes bounds a recorded write's Refusal: enough for the API
// server's first words (who refused: a policy, a webhook, a field's
// validation), not a webhook's whole answer.
const MaxRefusalBytes = 1024

// Applied tells whether the write changed the object to Object: accepted,
// not a dry run, not a delete.
func (w *Write) Applied() bool {
	return w.Code >= 200 && w.Code < 300 && !w.DryRun && w.Operation != OpDelete
}

// WriteQuery selects recorded writes to scan, oldest first.
type WriteQuery struct {
	Since, Until time.Time // Since <= Time < Until; zero: no bound
}

// WriteStats describes the recorded writes.
type WriteStats struct {
	Writes         int64
	Oldest, Newest time.Time
	Retention      time.Duration
	MaxWrites      int64
	// Since the store opened: pruned past the size bound, past the
	// retention, and objects not kept for their size.
	PrunedForSize, PrunedForAge, ObjectsDropped int64
}

// WriteStore keeps the recorded writes. The SQL store (both backends)
// implements it beside Store.
type WriteStore interface {
	// AppendWrites stores writes in one transaction, in order, and returns
	// how many were new (a retried batch is stored once, by ID).
	AppendWrites(ctx context.Context, writes []Write) (added int, err error)
	// ScanWrites calls each for every write q selects, oldest first, with
	// its OldObject, a page at a time: never the whole table in memory, no
	// connection held while each runs. each must not keep w past its call.
	ScanWrites(ctx context.Context, q WriteQuery, each func(w *Write) error) error
	// CountWrites is how many writes q selects: the replay's progress bar
	// measures how far its scan is against it.
	CountWrites(ctx context.Context, q WriteQuery) (int64, error)
	// PruneWrites deletes the writes older than before.
	PruneWrites(ctx context.Context, before time.Time) (int64, error)
	WriteStats(ctx context.Context) (WriteStats, error)
}
