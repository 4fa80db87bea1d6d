package ledger

import (
	"strings"
)

// One history stack (issue 44): the watch's observed versions are entries
// beside the API server's audit events and the console's records of the
// same writes. A version is told once, by the richest record of it: an
// accepted write (its user, impersonator, request, reason) wins over the
// watch entry of the version it left, and lends it nothing but, when it has
// none, the watch entry's diff. The rule is applied when reading
// (Query.OnePerVersion), not when storing: the audit webhook's batch and
// the watch event of one write come in either order, from any replica, and
// a read-time rule needs no coordination between them. Both rules meet the
// index ledger_entries_version (uid, resource_version) of migration 00005.

// supersededSQL is true of a watch entry whose version an accepted write also
// tells: the same object (uid) and resourceVersion, or, for a delete, a
// delete of the same object (a delete's answer is a Status, which has no
// resourceVersion to match).
const supersededSQL = "(source = 'watch' AND uid <> '' AND EXISTS (SELECT 1 FROM ledger_entries o" +
	" WHERE o.uid = ledger_entries.uid AND o.source <> 'watch' AND o.result = 'ok' AND NOT o.dry_run" +
	" AND ((o.resource_version = ledger_entries.resource_version AND o.resource_version <> '')" +
	" OR (o.action = 'delete' AND ledger_entries.action = 'delete'))))"

// borrowedDiffSQL is the diff column of a one-per-version read: an accepted
// write without a diff (the API server's audit has none) shows the diff of
// its version's watch entry.
const borrowedDiffSQL = "CASE WHEN source <> 'watch' AND diff = '' AND result = 'ok' AND NOT dry_run AND uid <> '' THEN" +
	" COALESCE((SELECT o.diff FROM ledger_entries o WHERE o.uid = ledger_entries.uid AND o.source = 'watch'" +
	" AND ((o.resource_version = ledger_entries.resource_version AND o.resource_version <> '')" +
	" OR (o.action = 'delete' AND ledger_entries.action = 'delete')) LIMIT 1), '') ELSE diff END"

// onePerVersionList is selectList with the borrowed diff.
var onePerVersionList = strings.Replace(selectList, ", diff,", ", "+borrowedDiffSQL+",", 1)

// Supersedes is supersededSQL and borrowedDiffSQL's pairing in Go, for the
// stores that are not SQL (the views' tests): whether the accepted write o
// tells the version the watch entry w observed. The backends' suite checks
// that the two agree.
func Supersedes(o, w Entry) bool {
	if w.Source != SourceWatch || o.Source == SourceWatch || w.UID == "" || o.UID != w.UID || o.Result != ResultOK || o.DryRun {
		return false
	}
	return (o.RV != "" && o.RV == w.RV) || (o.Action == ActionDelete && w.Action == ActionDelete)
}

// OnePerVersion applies Query.OnePerVersion to entries in Go: the entries
// without the watch entries another of all supersedes, each write without
// a diff given its watch entry's.
func OnePerVersion(entries, all []Entry) []Entry {
	var out []Entry
	for _, e := range entries {
		keep := true
		for _, o := range all {
			switch {
			case Supersedes(o, e):
				keep = false
			case e.Diff == "" && Supersedes(e, o):
				e.Diff = o.Diff
			}
		}
		if keep {
			out = append(out, e)
		}
	}
	return out
}

// WatchID is a watch entry's ID: the object's uid, the observed
// resourceVersion and the action, so that every replica observing the same
// event writes the same ID and the store keeps one (Append ignores an ID it
// has). The action tells a delete whose final state the informer missed (it
// carries the last version seen) from that version's update.
func WatchID(uid, rv, action string) string { return uid + "/" + rv + "/" + action }
