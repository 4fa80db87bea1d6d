package model

// Live is what the layout needs for live updates (server-sent events). The zero
// value turns them off for the page.
type Live struct {
	URL    string   // the event stream, e.g. "/events?kinds=csrs,crds&rows=csrs&since=…"; "" for none
	Kinds  []string // kinds whose counts the page shows (the nav)
	Rows   string   // the kind whose rows the page shows, if any
	Object string   // on a detail page: the row id of the object shown, e.g. "row-csrs-x"
	Reload string   // the page's own URL, for the "changed, reload" notice
	Status []Banner // page-wide live notices at render time: stale data
}

// LiveRows is one batch of row changes of a kind, rendered once for every page
// that shows the kind.
type LiveRows struct {
	Kind  string
	Rows  []LiveRow
	Total int // objects of the kind now: the count line of an unfiltered list
}

// LiveRow is one changed object: its new row, or its removal.
type LiveRow struct {
	ID      string // the row's DOM id (Row.ID)
	Removed bool
	Row     Row
}
