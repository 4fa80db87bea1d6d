package csrqueue

import "slices"

// PageRow is one row of a view's page as live updates compare pages: its key
// (a request's or a storm's group row, as the page names it) and a stamp
// that differs whenever what the row shows differs.
type PageRow struct{ Key, Stamp string }

// PageOpKind is what one PageOp does to a page.
type PageOpKind string

// The ops a page applies, removals first, then the rest in the order of the
// page after: each placed row goes after After ("" is first), which is by
// then in its place.
const (
	OpRemove  PageOpKind = "remove"  // the row leaves the page
	OpInsert  PageOpKind = "insert"  // a row new on the page, after After
	OpMove    PageOpKind = "move"    // a row of the page goes after After (Content: with its new version)
	OpReplace PageOpKind = "replace" // a row stays where it is, with its new version
)

// PageOp is one change of a page. Content says the row's new version travels
// with the op (always for an insert).
type PageOp struct {
	Kind    PageOpKind
	Key     string
	After   string
	Content bool
}

// DiffPage works out the ops that turn the page before into the page after,
// moving as few rows as it can: the rows on both pages whose order is kept
// form the longest run in the same order, and only the others move. A row
// whose stamp changed travels with its new version. Keys are unique on a page.
func DiffPage(before, after []PageRow) []PageOp {
	at := make(map[string]int, len(before))
	for i, r := range before {
		at[r.Key] = i
	}
	onAfter := make(map[string]bool, len(after))
	for _, r := range after {
		onAfter[r.Key] = true
	}
	var ops []PageOp
	for _, r := range before {
		if !onAfter[r.Key] {
			ops = append(ops, PageOp{Kind: OpRemove, Key: r.Key})
		}
	}
	// The positions before of the rows both pages hold, in the order after.
	var kept []int
	for _, r := range after {
		if i, ok := at[r.Key]; ok {
			kept = append(kept, i)
		}
	}
	stay := map[int]bool{}
	for _, i := range increasingRun(kept) {
		stay[i] = true
	}
	prev := ""
	for _, r := range after {
		i, was := at[r.Key]
		switch {
		case !was:
			ops = append(ops, PageOp{Kind: OpInsert, Key: r.Key, After: prev, Content: true})
		case !stay[i]:
			ops = append(ops, PageOp{Kind: OpMove, Key: r.Key, After: prev, Content: before[i].Stamp != r.Stamp})
		case before[i].Stamp != r.Stamp:
			ops = append(ops, PageOp{Kind: OpReplace, Key: r.Key, Content: true})
		}
		prev = r.Key
	}
	return ops
}

// increasingRun returns a longest strictly increasing subsequence of xs (its
// values), in O(n log n): patience sorting with back links.
func increasingRun(xs []int) []int {
	tails := []int{} // tails[k]: index in xs of the smallest end of a run of length k+1
	back := make([]int, len(xs))
	for i, x := range xs {
		k, _ := slices.BinarySearchFunc(tails, x, func(t, x int) int { return xs[t] - x })
		if k > 0 {
			back[i] = tails[k-1]
		} else {
			back[i] = -1
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	out := make([]int, len(tails))
	for k, i := len(tails)-1, -1; k >= 0; k-- {
		if i < 0 {
			i = tails[len(tails)-1]
		} else {
			i = back[i]
		}
		out[k] = xs[i]
	}
	return out
}
