// Package handlers translates HTTP into calls on the cluster cache, the writer
// and the presenters, and renders the result. It decides nothing about Kubernetes.
package handlers

import (
	"context"
	"log/slog"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	cleanuppages "github.com/clusterdesk/clusterdesk/handlers/cleanup"
	ledgerpages "github.com/clusterdesk/clusterdesk/handlers/ledger"
	liveupdates "github.com/clusterdesk/clusterdesk/handlers/live"
	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/handlers/signin"
	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/metrics"
)

// The ports main builds and the handlers consume (handlers/ports, where they
// are declared so that the feature packages can take them too).
type (
	Cluster      = ports.Cluster
	Access       = ports.Access
	URLAccess    = ports.URLAccess
	APFLoad      = ports.APFLoad
	ObjectEditor = ports.ObjectEditor
	FieldDocs    = ports.FieldDocs
	Lookup       = ports.Lookup
	CSRDecider   = ports.CSRDecider
	CSRIssuer    = ports.CSRIssuer
)

// The live updates' renderer and stream server (handlers/live), which main
// builds with NewLiveUpdates.
type (
	LiveUpdates = liveupdates.Updates
	LiveStreams = liveupdates.Streams
)

// DefaultCleanupProgressAfter is how long a confirmed cleanup may run before
// its page is sent with progress lines (handlers/cleanup), for main's flag.
const DefaultCleanupProgressAfter = cleanuppages.DefaultProgressAfter

// The sign-in's types main and the tests name as handlers' (handlers/signin).
type (
	SignInLimit   = signin.SignInLimit
	TokenReviewer = signin.TokenReviewer
	UserForgetter = signin.UserForgetter
)

// LedgerReaders is who reads the ledger's data (handlers/page/ledger_gate.go).
type LedgerReaders = page.LedgerReaders

// The values of --ledger-readers.
const (
	LedgerReadersListers = page.LedgerReadersListers
	LedgerReadersGranted = page.LedgerReadersGranted
)

// ParseLedgerReaders reads --ledger-readers ("" is the default, listers).
var ParseLedgerReaders = page.ParseLedgerReaders

// LedgerExportLimits bound the ledger's exports (handlers/ledger).
type LedgerExportLimits = ledgerpages.ExportLimits

// DefaultSignInLimit is the sign-in limit when Deps.SignInLimit is zero.
var DefaultSignInLimit = signin.DefaultSignInLimit

// Deps is everything the handlers need, built by main.
type Deps struct {
	Log      *slog.Logger
	Cluster  Cluster
	Access   Access
	Writer   CSRDecider
	Issuer   CSRIssuer // uploads of externally issued certificates; nil offers none
	Editor   ObjectEditor
	Docs     FieldDocs // the editor's field documentation; nil leaves the panel out
	Sessions *auth.Sessions
	Logins   *auth.LoginTokens
	User     string // who the console acts as (local mode: the kubeconfig's identity)
	ReadOnly bool
	DevUI    bool              // serve the component gallery at /ui
	Lookup   Lookup            // direct reads for insight pages; nil skips them (the pages say so)
	Live     *LiveUpdates      // live updates over server-sent events; nil turns them off
	Metrics  *metrics.Registry // request metrics; nil records none (metrics.go)

	// Gate decides who each request is (local, token or proxy mode); nil is
	// local mode over Sessions.
	Gate *auth.Gate
	// TokenReview learns who a pasted bearer token is (token mode).
	TokenReview TokenReviewer
	// SignInLimit bounds each client's sign-in attempts; zero is DefaultSignInLimit.
	SignInLimit SignInLimit
	// Users drops an identity's per-user clients at its sign-out (handlers/signin/logout.go);
	// nil keeps them until the cache evicts them.
	Users UserForgetter

	// Audit records every write made through clusterdesk (JSON line and
	// Kubernetes Event); nil logs one "write" line instead (edit_audit.go).
	Audit *audit.Recorder
	// Ledger is the durable history of changes (internal/ledger, issue 29):
	// the auditor's ledger pages read it; nil when the console runs without one.
	Ledger ledger.Store
	// LedgerReaders is who reads the ledger's data (--ledger-readers,
	// handlers/page/ledger_gate.go): "" or LedgerReadersListers, anyone who
	// may list the kind (the replay: the resource; the what-if: FlowSchemas
	// and priority levels); LedgerReadersGranted, only users the API server
	// allows get on clusterdesk.io/ledger, besides.
	LedgerReaders LedgerReaders
	// LedgerExports bound the ledger's exports; zero fields are
	// DefaultLedgerExportLimits (handlers/ledger/export_limit.go).
	LedgerExports LedgerExportLimits
	// APFLoad is the live load of API Priority and Fairness, read as the
	// console and shown to users who may get /metrics (URLAccess); nil for
	// either leaves the load out of the pages.
	APFLoad   APFLoad
	URLAccess URLAccess

	// CleanupProgressAfter is how long a confirmed cleanup may run before
	// its page is sent with progress lines; zero is
	// DefaultCleanupProgressAfter (handlers/cleanup/run.go).
	CleanupProgressAfter time.Duration

	// PublicOrigin is --public-url's origin (https://console.example.com),
	// "" without it. Set, it is the only Origin forms are accepted from
	// (csrf.go), and an https one sends HSTS over a plain listener behind a
	// TLS-terminating proxy (hsts.go). Cookie security follows it through
	// Sessions.Secure, which main sets.
	PublicOrigin string

	// CSRQueue is the CSR queue's caches; nil: Live's, else New builds them
	// (csr_queue.go, csrQueueOf).
	CSRQueue *csrqueue.Queue
	// Policies are the CSR approval policies compiled from the shared
	// policy cache (kube.PolicyCache), read by the queue's rows and filter,
	// a CSR page's policies panel and the agreement page; nil: the queue
	// shows no verdicts and the panels list the policies as the user.
	Policies *csrpolicy.Set
	// ApproverLease names the approver's Lease (namespace/name) and
	// ReadApproverLease reads it (nil: not read; the pending requests' reasons
	// then say no approver is installed).
	ApproverLease     string
	ReadApproverLease func(context.Context) (*coordinationv1.Lease, error)
}
