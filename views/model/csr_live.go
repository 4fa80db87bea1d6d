package model

// CSRLiveRows is one live update of the CSR queue, rendered once for every
// open queue: the changed rows, the ids of removed ones, and the state tabs'
// counts over all CSRs (what an unfiltered queue shows).
type CSRLiveRows struct {
	Rows    []CSRRow
	Removed []string // row ids
	Tabs    []CSRTab
	Total   int
	Columns []Column // the queue's columns, in the order of the rows' cells
}
