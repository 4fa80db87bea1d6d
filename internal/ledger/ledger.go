// Package ledger is the durable history of every change to the console's kinds
// (issue 29): the API server's own audit events for them, received as an audit
// webhook backend, and the console's own write records (with their diffs), kept
// in a database that outlives the console: an embedded pure-Go SQLite by
// default, PostgreSQL when replicas share one ledger.
//
// This file is the contract between the store (backends, schema, queries), the
// ingestion (the audit webhook, the console's records) and the auditor's views.
// Nothing in this package talks HTTP or renders pages.
package ledger

import (
	"context"
	"time"
)

// Where an entry comes from. An entry's (Source, ID) is unique.
const (
	// SourceAPIServer is an audit event the API server sent to the webhook;
	// its ID is the SHA-256 of the event as received (internal/ingest), not
	// its auditID: a client chooses the auditID (the Audit-ID request
	// header, taken as is), so it would choose which of its writes the
	// ledger keeps. The auditID is kept in AuditID.
	SourceAPIServer = "apiserver"
	// SourceConsole is a write made through the console (an audit.Record);
	// its ID is the record's own ID.
	SourceConsole = "console"
	// SourceWatch is a version of an object the console's watch observed
	// (internal/ingest's WatchFeed), with the diff from the version observed
	// before; its ID is the object's uid and resourceVersion (WatchID), so
	// that replicas observing the same event store it once. It says what
	// changed, not who: Manager names the field managers credited.
	SourceWatch = "watch"
)

// The results of a request, as audit.Record spells them.
const (
	ResultOK     = "ok"     // the API server accepted it (2xx)
	ResultDenied = "denied" // 401/403 or the console's read-only guard
	ResultFailed = "failed" // any other refusal or error
)

// The actions an entry records, in words an auditor reads. The ingestion maps
// the API verb and subresource to one of them: an update of a CSR's approval
// subresource that adds an Approved condition is ActionApprove.
const (
	ActionCreate  = "create"
	ActionUpdate  = "update" // update or patch of the object (or a subresource other than below)
	ActionDelete  = "delete"
	ActionApprove = "approve" // a CSR's Approved condition added (approval subresource)
	ActionDeny    = "deny"    // a CSR's Denied condition added
	ActionIssue   = "issue"   // a CSR's status.certificate set (status subresource)
	ActionStatus  = "status"  // any other status write
)

// MaxObjectBytes bounds Entry.Object: a bigger object (a CRD with a megabyte
// schema) is stored without it (ObjectDropped), never cut into invalid JSON.
const MaxObjectBytes = 256 << 10

// Entry is one change, attempted or made, to one object of the console's kinds.
type Entry struct {
	Source string
	ID     string // unique per Source (see the Source constants)
	// AuditID is the API server's audit ID of the request (SourceAPIServer):
	// shown and exported to match the API server's own audit log, never the
	// entry's identity, since the client may have chosen it.
	AuditID string
	Time    time.Time // when the API server received the request (UTC)
	// User is who made the change: the impersonated user when the request
	// impersonated one (the console in proxy mode), else the authenticated one.
	User   string
	Groups []string
	// Impersonator is the authenticated user when User was impersonated.
	Impersonator string
	UserAgent    string
	SourceIPs    []string

	Verb        string // the API verb: create, update, patch, delete, deletecollection
	Action      string // Action* above
	APIGroup    string // "" for the core group
	APIVersion  string
	Resource    string // plural: certificatesigningrequests
	Subresource string // approval, status, or ""
	Kind        string // the console's kind id ("csrs", "crds"…), or "" when not one of them
	Name        string
	UID         string // when known (from the object)
	Signer      string // a CSR's spec.signerName, for per-signer views

	Code   int    // the response's HTTP status
	Result string // Result*
	// Reason is a CSR decision's condition reason and message, or a
	// refusal's message.
	Reason string
	DryRun bool

	// Object is the object as the request left it (the audit event's
	// responseObject; for a delete, the last object known), JSON, at most
	// MaxObjectBytes; nil when not recorded or dropped.
	Object        []byte
	ObjectDropped bool
	// Diff is the unified diff of the object: the console's (SourceConsole),
	// or between the watch's observed versions (SourceWatch). An accepted
	// write without one reads the diff of its version's watch entry
	// (Query.OnePerVersion).
	Diff string
	// RV is the object's resourceVersion the write left, or the version the
	// watch observed; "" when unknown (a refusal, a delete's Status).
	RV string
	// Manager is the field managers a watch entry credits, joined by ", ".
	Manager string
	// Policy is the CSR approval policy version an accepted decision names
	// (csrpolicy.VersionText in its condition's message, parsed at
	// ingestion; issue 47, item 4); zero for any other entry.
	Policy PolicyRef
}

// PolicyRef is one version of a CSR approval policy: its name,
// metadata.generation and the short hash of its expression
// (csrpolicy.Version, spelled here so the ledger depends on no policy code).
type PolicyRef struct {
	Name       string
	Generation int64
	Hash       string
}

// Query selects entries. Zero fields do not filter.
type Query struct {
	// One object's history: Kind and Name (UID narrows it to one incarnation
	// of a name that was deleted and created again).
	Kind, Name, UID string
	User            string // exact user
	Signer          string // exact signer name
	Manager         string // exact field managers of a watch entry
	Actions         []string
	Result          string
	Source          string
	Since, Until    time.Time // Since <= Time < Until
	// Kinds limits the entries to these kind ids (the kinds the viewer may
	// list); nil means every kind.
	Kinds []string
	// Oldest orders the page oldest first (an object's story); the default is
	// newest first (the ledger's list).
	Oldest bool
	// After is the cursor of the page to continue from (Page.Next); "" starts.
	After string
	Limit int // at most MaxLimit; 0 means DefaultLimit
	// FoldHousekeeping leaves out the control plane's housekeeping
	// (HousekeepingSQL). The zero Query keeps every entry: an object's
	// history and the CSR's story always tell all of it.
	FoldHousekeeping bool
	// OnePerVersion shows each version of an object once: a watch entry is
	// left out when an accepted write of the same object (uid) left the
	// same resourceVersion, or, for a delete, deleted it (Supersedes), and
	// such a write without a diff reads its watch entry's. The views set
	// it; the zero Query reads the entries as stored.
	OnePerVersion bool
}

// Paging bounds.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// Page is one page of a query.
type Page struct {
	Entries []Entry
	// Next is the cursor of the next page, "" when this was the last.
	Next string
}

// Stats describes the ledger for the views and readiness.
type Stats struct {
	Backend   string // "sqlite" or "postgres"
	Entries   int64
	Oldest    time.Time // zero when empty
	Newest    time.Time
	Retention time.Duration // 0: kept forever
	// MaxEntries is the size bound (0: none); PrunedForSize counts the
	// entries it pruned since the store opened.
	MaxEntries    int64
	PrunedForSize int64
}

// Store is the durable ledger. Implementations are safe for concurrent use.
type Store interface {
	// Append stores entries in one transaction and returns how many were new:
	// an entry whose (Source, ID) is already stored is ignored, so a batch the
	// API server retries is stored once. When Append returns nil, the entries
	// survive a crash of the process. Values the database could not hold are
	// made storable the same way on every backend (storable.go), and an entry
	// the database still refuses for its data is stored as a placeholder
	// saying so, never failing the others of its batch (append.go): an error
	// means the database did not take the batch, not that one entry was bad.
	Append(ctx context.Context, entries []Entry) (added int, err error)
	// Query returns one page; a page costs in proportion to its rows (keyset
	// paging on indexes), never to the size of the ledger.
	Query(ctx context.Context, q Query) (Page, error)
	// Export calls each for every entry q selects, in order (no limit),
	// until each returns an error or ctx ends. It reads keyset pages and
	// holds no connection while each runs, so an export to a client that
	// stops reading takes nothing Append, Query or Ping need.
	Export(ctx context.Context, q Query, each func(Entry) error) error
	// Prune deletes the entries older than before and returns how many.
	Prune(ctx context.Context, before time.Time) (int64, error)
	Stats(ctx context.Context) (Stats, error)
	// Ping says whether the database answers (readiness, the pages' banner).
	Ping(ctx context.Context) error
	Close() error
}
