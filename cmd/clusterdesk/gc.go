package main

import "runtime/debug"

// defaultGOGC is the collector's target when the operator sets no GOGC: the
// heap may grow by half its live size between collections, not by all of
// it (Go's default, 100). The console's live heap at a large cluster is
// mostly its caches, so Go's default let the process grow to twice them and
// more: at the page benchmark's shapes (53,000 CSRs, 300 CRDs; 113 MiB live
// after 100 page views) RSS after the views was 305-320 MiB at GOGC=100,
// 292-297 at 75 and 258-259 at 50, for 23% more of the console's CPU time
// in the views (2.42 → 2.98 s for 100) and 15-27% more to sync (README,
// "Memory"). An operator's GOGC (or GOGC=off with GOMEMLIMIT) wins.
const defaultGOGC = 50

// setDefaultGOGC sets defaultGOGC unless getenv("GOGC") names one; it
// reports whether it did.
func setDefaultGOGC(getenv func(string) string) bool {
	if getenv("GOGC") != "" {
		return false
	}
	debug.SetGCPercent(defaultGOGC)
	return true
}
