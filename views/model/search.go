package model

// SearchPage is the global search: objects of every kind whose name matches
// the query, grouped by kind.
type SearchPage struct {
	Chrome Chrome
	Query  string
	Groups []SearchGroup // one per kind, in navigation order; kinds without hits are left out
	Total  int           // hits over all groups, including those not shown
	Notes  []string      // kinds not searched and why (forbidden, still loading)
}

// SearchGroup is one kind's hits.
type SearchGroup struct {
	KindID  string
	Title   string
	ListURL string // the kind's list filtered by the query
	Hits    []SearchHit
	More    int // hits not shown (see the list page)
}

// SearchHit is one object whose name matches. The name is split around the
// first match so the view can mark it.
type SearchHit struct {
	Name   string
	Href   string
	Before string
	Match  string
	After  string
}
