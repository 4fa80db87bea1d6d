// Package ingest feeds the ledger (internal/ledger, issue 29): the API
// server's own audit events for the console's kinds, received as its audit
// webhook backend (receiver.go, auth.go), mapped to ledger entries (event.go,
// csr.go), and the console's own write records (console.go). Nothing here
// renders pages: the receiver is a plain net/http handler on a listener of
// its own, not the user-facing server.
package ingest
