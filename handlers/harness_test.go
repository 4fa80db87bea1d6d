package handlers

import (
	"io"
	"log/slog"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// The test harness (issue 44): every handlers test builds its console here,
// on a fake cluster (newFakeConsole) or on the devcluster
// (harness_integration_test.go), and what differs between tests is an option
// below. The helpers a signed-in test uses are one file each by job:
// harness_login_test.go (sessions), harness_requests_test.go (GET and POST
// with CSRF), harness_wait_test.go (bounded waits), csrf_helpers_test.go (the
// CSRF tokens and forgeries).

// testServer is a console under test: its handler, the fake writer of a
// console on a fake cluster (nil on the devcluster), and local mode's current
// one-time login token (LoginTokens announces the next one at each sign-in).
type testServer struct {
	e      *echo.Echo
	writer *recordingWriter
	token  string
}

// consoleOption sets what differs between the tests' consoles on Deps; a
// func(*Deps) of the test's own is one too.
type consoleOption = func(*Deps)

// discardLog is the log of a console whose log no test reads.
func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// build is the one place a handlers test calls New. Unset, Log logs nowhere,
// Sessions are new, and a console in local mode (no Gate) announces its
// login tokens to ts.token; opts run after the first two, so an option may
// build a gate over the console's Sessions (tokenMode).
func (ts *testServer) build(t testing.TB, deps Deps, opts ...consoleOption) *testServer {
	t.Helper()
	if deps.Log == nil {
		deps.Log = discardLog()
	}
	if deps.Sessions == nil {
		deps.Sessions = auth.NewSessions()
	}
	for _, o := range opts {
		if o != nil {
			o(&deps)
		}
	}
	if deps.Gate == nil && deps.Logins == nil {
		deps.Logins = auth.NewLoginTokens(func(tok string) { ts.token = tok })
	}
	ts.e = New(deps)
	return ts
}

// newConsole is a console built from deps (see build).
func newConsole(t testing.TB, deps Deps, opts ...consoleOption) *testServer {
	t.Helper()
	return new(testServer).build(t, deps, opts...)
}

// newFakeConsole is a console in local mode on a fake cluster, acting as
// "tester" with a writer that only counts the decisions it is asked for.
func newFakeConsole(t testing.TB, cluster Cluster, access Access, opts ...consoleOption) *testServer {
	t.Helper()
	ts := &testServer{writer: &recordingWriter{}}
	return ts.build(t, Deps{Cluster: cluster, Access: access, Writer: ts.writer, User: "tester"}, opts...)
}

// readOnlyConsole builds the console with --read-only (or without, for false).
func readOnlyConsole(on bool) consoleOption { return func(d *Deps) { d.ReadOnly = on } }

// withSignInLimit sets the sign-in limit (routeTableSignInLimit lets a test
// post dozens of sign-ins from one address).
func withSignInLimit(l SignInLimit) consoleOption { return func(d *Deps) { d.SignInLimit = l } }

// tokenMode signs people in with a pasted bearer token, learnt by review,
// over the console's sessions.
func tokenMode(review TokenReviewer) consoleOption {
	return func(d *Deps) {
		d.Gate = &auth.Gate{Mode: auth.ModeToken, Sessions: d.Sessions}
		d.TokenReview = review
	}
}

// perUserClients makes the console act as each signed-in person through
// users (the modes other than local): access checks, writes, edits and
// lookups all go out with the person's identity.
func perUserClients(users *kube.Users) consoleOption {
	return func(d *Deps) {
		d.Access, d.Writer = kube.UserAccess{Users: users}, kube.UserWriter{Users: users}
		d.Editor, d.Lookup = kube.UserEditor{Users: users}, kube.UserLookup{Users: users}
	}
}

// withLookup gives the console direct reads (the insight pages, a CSR's
// certificate).
func withLookup(l Lookup) consoleOption { return func(d *Deps) { d.Lookup = l } }

// withLedger gives the console a ledger.
func withLedger(s ledger.Store) consoleOption { return func(d *Deps) { d.Ledger = s } }

// withLedgerReaders sets who reads the ledger (--ledger-readers).
func withLedgerReaders(r LedgerReaders) consoleOption { return func(d *Deps) { d.LedgerReaders = r } }
