// Package csrqueue is the CSR approval queue's engine, without a word of
// HTML: which CSRs a view shows (filters, state tabs' counts, label
// selector, text search), in which order, grouped how (a storm of retries is
// one row), which page of them; the index kept per CSR change (index.go,
// follow.go) and the per-object facts that make a view of 50,000 CSRs cost
// about what its rows and its filters' matches cost (Cache); and storms, in
// one place: the index (storms.go) and the plan of a group action
// (storm_plan.go). Queue (queue.go) holds one server's index and caches.
//
// Storms live here rather than in internal/decide because the index is built
// from the queue's facts (the decoded requests it caches) and read by the
// queue's grouping on every view; decide writes a confirmed plan request by
// request, by UID, and needs to know nothing of storms. Imports flow one
// way: handlers and internal/present use this package, which uses
// internal/csr (decoding, checks) and nothing of the web layer or present.
//
// The text filter matches what a row shows, and only that. The row's
// wording belongs to the presenter, so the page that asks for a view lends
// the presenter's (present.CSRQueueWords) as Words; the queue searches those
// words and caches the parts that depend on the object alone. A Queue wires
// in what it owns (its cache, its decoders, the page size: Queue.Run), so the
// presenter only lays out what the engine returns.
package csrqueue
