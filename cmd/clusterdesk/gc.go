package main

import "runtime/debug"

// defaultGOGC is the collector's target when the operator sets no GOGC: the
// heap may grow by half its live size between collections, not by all of
// it (Go's default, 100). The console's live heap at a large cluster is
// mostly its caches (50,000 CSRs: ~140 MiB marked during page views), so
// the default let the process grow to twice that and more; the page
// benchmark's shapes measure the RSS and the pages' times both ways (README,
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
