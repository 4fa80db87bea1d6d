package model

// CSRViewUpdate is one batch of changes of one open view of the CSR queue
// (its tab, filters, sort and page), rendered once for every tab showing the
// view: the ops that turn the page the tabs show into the page now, the rows
// those ops carry, and the tabs, count line and pager when they changed.
type CSRViewUpdate struct {
	// Refetch: the server cannot say what changed (the page emptied or filled,
	// the queue was not readable): the tabs fetch the view again.
	Refetch bool
	Ops     []CSRViewOp
	Rows    []CSRRow // the rows the ops carry, in the columns of Columns
	Columns []Column
	// Hash names the page's row keys in order (FNV-1a, 32 bits, hex, of the
	// keys each followed by a line feed): a tab whose rows differ after the
	// ops fetches the view again.
	Hash string
	// Counts is set when the tabs' counts or the count line changed: the
	// badges and the line only (the tabs' links stay what the view has).
	Counts *CSRViewCounts
	// PagerChanged sends Counts.Pager's links (none when one page holds all).
	PagerChanged bool
}

// CSRViewOp is one change of the page (csrqueue.PageOp): Op is remove,
// insert, move or replace; Key the row's DOM id; After the row it follows
// ("" for the first); Signer, on a row that travels, says whose decision the
// row's selection box or storm actions are (the page keeps them only where
// the user may decide for it).
type CSRViewOp struct {
	Op, Key, After, Signer string
}

// CSRViewCounts are the parts of an open view besides its rows.
type CSRViewCounts struct {
	Tabs           []CSRTab
	Matched, Total int
	Pager          Pager
}
