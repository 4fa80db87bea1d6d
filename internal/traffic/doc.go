// Package traffic folds the API server's audit events into the recorded
// traffic the APF what-if replays (issue 46): per second, per series (the
// fields API Priority and Fairness classifies a request by, its class, the
// API server instance), the arrivals, the 429s and the latency, so that the
// database takes one upsert per series and second of a batch, never a row
// per request. Storage is internal/ledger's (traffic.go); the audit webhook
// receiver (internal/ingest) folds each batch before its 200.
package traffic
