package ledger

// SetPruneChunk makes st delete at most n rows per prune transaction (Prune,
// the trim, the writes' prune): a test proves "more than one chunk" with a
// few hundred rows instead of the 12,000 the default needs, which took 18 s
// of CI's unit layer under the race detector. Call it before st is used;
// tests only (a _test.go file).
func SetPruneChunk(st Store, n int64) { st.(*sqlStore).pruneChunk = n }
