package model

// Pager is where a paged list stands: which rows of the matching ones this
// page shows, and the links to the others. Every href is a full list URL with
// the filters and sort of the view, so the links work without JavaScript.
type Pager struct {
	Page    int // 1-based
	Pages   int // at least 1
	From    int // 1-based number of the first row shown; 0 when none
	To      int // number of the last row shown
	Matched int // rows that pass the filters, over every page
	Prev    string
	Next    string
	Links   []PageLink // the first, the last and a window around the current page
}

// PageLink is one numbered link of a Pager; Gap marks "…" between windows.
type PageLink struct {
	Number  int
	Href    string
	Current bool
	Gap     bool
}
