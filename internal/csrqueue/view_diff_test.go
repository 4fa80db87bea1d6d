package csrqueue

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// applyOps does to a page what web/js/live-csr.js does with the ops: the
// test's oracle is that the page after the ops is the page after.
func applyOps(t *testing.T, before []PageRow, ops []PageOp, after []PageRow) []PageRow {
	t.Helper()
	stamps := map[string]string{}
	for _, r := range after {
		stamps[r.Key] = r.Stamp
	}
	page := slices.Clone(before)
	find := func(k string) int { return slices.IndexFunc(page, func(r PageRow) bool { return r.Key == k }) }
	for _, op := range ops {
		i := find(op.Key)
		row := PageRow{Key: op.Key}
		if i >= 0 {
			row = page[i]
		}
		if op.Content {
			row.Stamp = stamps[op.Key]
		}
		switch op.Kind {
		case OpRemove:
			if i < 0 {
				t.Fatalf("remove of %s, not on the page", op.Key)
			}
			page = slices.Delete(page, i, i+1)
		case OpReplace:
			if i < 0 {
				t.Fatalf("replace of %s, not on the page", op.Key)
			}
			page[i] = row
		case OpInsert, OpMove:
			if (op.Kind == OpMove) != (i >= 0) {
				t.Fatalf("%s of %s: on the page %v", op.Kind, op.Key, i >= 0)
			}
			if i >= 0 {
				page = slices.Delete(page, i, i+1)
			}
			at := 0
			if op.After != "" {
				if at = find(op.After) + 1; at == 0 {
					t.Fatalf("%s of %s after %s, which is not on the page", op.Kind, op.Key, op.After)
				}
			}
			page = slices.Insert(page, at, row)
		}
	}
	return page
}

func rows(spec ...string) []PageRow {
	var out []PageRow
	for _, s := range spec {
		out = append(out, PageRow{Key: s[:1], Stamp: s[1:]})
	}
	return out
}

func TestDiffPage(t *testing.T) {
	cases := []struct {
		name          string
		before, after []PageRow
		want          []PageOp
	}{
		{"nothing changed", rows("a1", "b1"), rows("a1", "b1"), nil},
		{"new first row", rows("a1", "b1"), rows("n1", "a1", "b1"),
			[]PageOp{{Kind: OpInsert, Key: "n", Content: true}}},
		{"new last row", rows("a1", "b1"), rows("a1", "b1", "n1"),
			[]PageOp{{Kind: OpInsert, Key: "n", After: "b", Content: true}}},
		{"first row removed", rows("a1", "b1", "c1"), rows("b1", "c1"),
			[]PageOp{{Kind: OpRemove, Key: "a"}}},
		{"last row removed", rows("a1", "b1", "c1"), rows("a1", "b1"),
			[]PageOp{{Kind: OpRemove, Key: "c"}}},
		{"a row changed in place", rows("a1", "b1", "c1"), rows("a1", "b2", "c1"),
			[]PageOp{{Kind: OpReplace, Key: "b", Content: true}}},
		{"the last row moves first, changed", rows("a1", "b1", "c1"), rows("c2", "a1", "b1"),
			[]PageOp{{Kind: OpMove, Key: "c", Content: true}}},
		{"a row moves down unchanged", rows("a1", "b1", "c1", "d1"), rows("b1", "c1", "a1", "d1"),
			[]PageOp{{Kind: OpMove, Key: "a", After: "c"}}},
		// A paged view: the first row of the page is decided and leaves the
		// tab, the first row of the next page enters at the bottom.
		{"a row enters from the next page", rows("a1", "b1", "c1"), rows("b1", "c1", "d1"),
			[]PageOp{{Kind: OpRemove, Key: "a"}, {Kind: OpInsert, Key: "d", After: "c", Content: true}}},
		// A new request on an earlier page pushes the last row to the next page.
		{"a row leaves for the next page", rows("a1", "b1", "c1"), rows("n1", "a1", "b1"),
			[]PageOp{{Kind: OpRemove, Key: "c"}, {Kind: OpInsert, Key: "n", Content: true}}},
		// A storm's group row is one key: its stamp (the count) changes as it grows.
		{"a storm grows", rows("a1", "G2", "b1"), rows("a1", "G3", "b1"),
			[]PageOp{{Kind: OpReplace, Key: "G", Content: true}}},
		{"two requests become a storm", rows("a1", "x1", "y1", "b1"), rows("a1", "G2", "b1"),
			[]PageOp{{Kind: OpRemove, Key: "x"}, {Kind: OpRemove, Key: "y"}, {Kind: OpInsert, Key: "G", After: "a", Content: true}}},
		{"a storm falls apart", rows("a1", "G2", "b1"), rows("a1", "x1", "b1"),
			[]PageOp{{Kind: OpRemove, Key: "G"}, {Kind: OpInsert, Key: "x", After: "a", Content: true}}},
		{"the page empties", rows("a1", "b1"), nil,
			[]PageOp{{Kind: OpRemove, Key: "a"}, {Kind: OpRemove, Key: "b"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ops := DiffPage(tc.before, tc.after)
			if !slices.Equal(ops, tc.want) {
				t.Errorf("ops\n got %+v\nwant %+v", ops, tc.want)
			}
			if got := applyOps(t, tc.before, ops, tc.after); !slices.Equal(got, tc.after) {
				t.Errorf("applied: %v, want %v", got, tc.after)
			}
		})
	}
}

// TestDiffPageShuffles checks on random pages (keys kept, dropped, added,
// shuffled, changed) that the ops make the page after, and that no row on
// the page is inserted again (it moves, keeping its content if unchanged).
func TestDiffPageShuffles(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 4))
	keys := "abcdefghijklmnopqrstuvwxyz"
	for range 2000 {
		var before []PageRow
		for _, i := range r.Perm(len(keys))[:r.IntN(12)] {
			before = append(before, PageRow{Key: keys[i : i+1], Stamp: "1"})
		}
		var after []PageRow
		for _, i := range r.Perm(len(keys))[:r.IntN(12)] {
			st := "1"
			if r.IntN(4) == 0 {
				st = "2"
			}
			after = append(after, PageRow{Key: keys[i : i+1], Stamp: st})
		}
		ops := DiffPage(before, after)
		if got := applyOps(t, before, ops, after); !slices.Equal(got, after) {
			t.Fatalf("before %v after %v: ops %+v made %v", before, after, ops, got)
		}
		for _, op := range ops {
			if op.Kind == OpInsert && slices.ContainsFunc(before, func(p PageRow) bool { return p.Key == op.Key }) {
				t.Fatalf("insert of %s, which was on the page", op.Key)
			}
		}
	}
}

func TestIncreasingRun(t *testing.T) {
	for _, tc := range []struct{ in, want []int }{
		{nil, []int{}},
		{[]int{3, 1, 2}, []int{1, 2}},
		{[]int{0, 1, 2}, []int{0, 1, 2}},
		{[]int{2, 1, 0}, []int{0}},
		{[]int{1, 5, 2, 3, 0, 4}, []int{1, 2, 3, 4}},
	} {
		if got := increasingRun(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("increasingRun(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
