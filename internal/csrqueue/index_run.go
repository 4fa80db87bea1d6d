package csrqueue

import (
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

// run lays out one view from the index (c.mu held, the index current). A
// view without filters but the state tab reads the tab's order kept in the
// index, from its first row to the page's last; a view filtered by signer
// alone reads that signer's CSRs of the tab; other filters test the CSRs of
// the narrowest set they select (the signer's, the matching requesters', the
// pending tab for a group, else all, for the tabs' counts) and sort the
// matches.
func (c *Cache) run(q Query, env Env) Result {
	x := c.index()
	storms := c.stormsNow()
	v := &view{checks: env.Checks, words: env.Words, storms: storms, policies: env.Policies, approver: env.Approver, now: env.Now,
		approvals: x.approvals}
	res := Result{Total: len(x.byName), Signers: x.signerCounts(), Storms: storms, Decidable: x.decidable(env.MayDecide)}
	sortKey := cmp.Or(q.Sort, SortQueue)
	limit, _ := ageLimit(q.Age)
	needle := strings.ToLower(q.Filter)
	requester := strings.ToLower(q.Requester)
	byLabels := env.Labels != nil && !env.Labels.Empty()
	byPolicy := q.Policy != "" || q.Verdict != ""
	byWhy := q.Why != ""
	if !byWhy && !byLabels && limit == 0 && requester == "" && q.Group == "" && needle == "" && !byPolicy {
		if q.Signer == "" && sortKey != SortChecks {
			return c.runOrdered(x, q, env, v, res)
		}
	}
	tab := tabSlots(q.State)
	// Only a signer filter: the other tabs' counts are the sizes of the
	// signer's sets, and only the tab's CSRs are read.
	bySignerOnly := q.Signer != "" && !byLabels && limit == 0 && requester == "" && q.Group == "" && needle == "" && !byPolicy && !byWhy
	// each calls fn with the candidates of a state tab: every CSR the filters
	// may keep is among them.
	each := func(slot int, fn func(*entry)) {
		switch {
		case q.Group != "" || byPolicy || byWhy: // only pending requests are in storms and duplicate sets, and have verdicts
			if slot != slotOf(Pending) {
				return
			}
			cur := x.order(SortQueue)[slot].cursor(false)
			for e := cur.next(); e != nil; e = cur.next() {
				fn(e)
			}
		case q.Signer != "":
			if s := x.signers[q.Signer]; s != nil {
				for e := range s[slot] {
					fn(e)
				}
			}
		case requester != "":
			for _, id := range x.idents {
				if !identityMatches(id, requester) {
					continue
				}
				for e := range id.csrs[slot] {
					fn(e)
				}
			}
		default:
			cur := x.order(SortQueue)[slot].cursor(false)
			for e := cur.next(); e != nil; e = cur.next() {
				fn(e)
			}
		}
	}
	res.Counts = map[string]int{}
	var kept []*Item
	// A candidate is tested as an Item on the stack; only a kept one is
	// copied into a chunk of records (one allocation per chunk, not per
	// item): a filter over tens of thousands of CSRs otherwise allocates a
	// record per CSR it rejects, megabytes of garbage per view. A chunk
	// bounds what a narrow filter allocates.
	var slab []Item
	for slot := range nStates {
		if bySignerOnly && !tab[slot] {
			if s := x.signers[q.Signer]; s != nil && len(s[slot]) > 0 {
				res.Counts[States[slot]] = len(s[slot])
			}
			continue
		}
		each(slot, func(e *entry) {
			c := e.obj
			if byLabels && !env.Labels.Matches(labels.Set(c.Labels)) {
				return
			}
			if q.Signer != "" && c.Spec.SignerName != q.Signer {
				return
			}
			if !ageMatches(limit, c.CreationTimestamp.Time, env.Now) {
				return
			}
			if requester != "" && !requesterMatches(c, requester) {
				return
			}
			if q.Group != "" && !storms.InSet(q.Group, c.Name) {
				return
			}
			cand := Item{CSR: c, State: e.f.state(), Decided: e.f.decided(c), Bad: e.f.bad, f: &e.f, v: v}
			if byPolicy && !cand.policyMatches(q.Policy, q.Verdict) {
				return
			}
			if byWhy && (cand.State != Pending || string(cand.Why(false).Code) != q.Why) {
				return
			}
			if needle != "" && !cand.matches(needle, env.Now) {
				return
			}
			res.Counts[e.f.state()]++
			if tab[slot] {
				if len(slab) == cap(slab) {
					slab = make([]Item, 0, min(1024, len(x.byName)))
				}
				slab = append(slab, cand)
				kept = append(kept, &slab[len(slab)-1])
			}
		})
	}
	if sortKey == SortChecks {
		for _, it := range kept {
			it.ranked()
		}
	}
	slices.SortFunc(kept, func(a, b *Item) int {
		r := compareBy(sortKey, a, b, env.Words)
		if r == 0 {
			r = compareQueue(a, b)
		}
		if q.Desc {
			return -r
		}
		return r
	})
	res.Matched = len(kept)
	if q.Group == "" {
		kept = collapseStorms(kept, storms)
	} else {
		res.Group = storms.ByID(q.Group)
	}
	res.Rows = len(kept)
	lo, hi, page := window(q.Page, env.PageSize, len(kept))
	res.Page, res.Items = page, kept[lo:hi]
	return res
}

// runOrdered is a view of a state tab (or all) without filters: the counts
// are the index's, the rows the tab's order from the first to the page's
// last (each storm one row, where its first request is).
func (c *Cache) runOrdered(x *index, q Query, env Env, v *view, res Result) Result {
	storms := v.storms
	tab := tabSlots(q.State)
	res.Counts = x.stateCounts()
	for slot, in := range tab {
		if in {
			res.Matched += x.counts[slot]
		}
	}
	res.Rows = res.Matched
	if tab[slotOf(Pending)] {
		// Every storm's requests are pending and in the tab: each storm is
		// one row.
		res.Rows -= storms.rowsSaved()
	}
	lo, hi, page := window(q.Page, env.PageSize, res.Rows)
	res.Page = page
	if hi == 0 {
		return res
	}
	key, by := SortQueue, entryOrder(SortQueue)
	switch sortKey := cmp.Or(q.Sort, SortQueue); {
	case treeKey(sortKey):
		key, by = sortKey, entryOrder(sortKey)
	case sortKey == SortState: // the tabs' queue orders, by the state's wording
		by = func(a, b *entry) int {
			return cmp.Or(cmp.Compare(env.Words.Status(a.f.state()), env.Words.Status(b.f.state())), compareQueuePos(a.pos(), b.pos()))
		}
	}
	if q.Desc {
		asc := by
		by = func(a, b *entry) int { return asc(b, a) }
	}
	ords := x.order(key)
	var cursors []*cursor
	for slot, in := range tab {
		if in {
			cursors = append(cursors, ords[slot].cursor(q.Desc))
		}
	}
	next := newMergeCursor(by, cursors...)
	seen := map[string]bool{} // storms whose row is laid out
	res.Items = make([]*Item, 0, hi-lo)
	for row, e := 0, next.next(); e != nil && row < hi; e = next.next() {
		var st *Storm
		if e.f.state() == Pending && !e.f.bad {
			st = storms.Of(e.obj.Name)
		}
		if st != nil {
			if seen[st.ID] {
				continue
			}
			seen[st.ID] = true
		}
		if row >= lo {
			it := v.entryItem(e)
			if st != nil {
				// The checks shown are those of the storm's newest request,
				// which is in the tab as all its requests are.
				it = &Item{CSR: e.obj, State: e.f.state(), Decided: e.f.decided(e.obj), f: &e.f, v: v, Storm: st,
					ChecksOf: v.entryItem(x.byName[st.Newest().Name])}
			}
			res.Items = append(res.Items, it)
		}
		row++
	}
	return res
}

// tabSlots are the state tabs a view's state shows: all for "", none for a
// state the queue does not know.
func tabSlots(state string) [nStates]bool {
	var tab [nStates]bool
	for i, s := range States {
		tab[i] = state == "" || state == s
	}
	return tab
}

func (v *view) entryItem(e *entry) *Item {
	return &Item{CSR: e.obj, State: e.f.state(), Decided: e.f.decided(e.obj), Bad: e.f.bad, f: &e.f, v: v}
}

func identityMatches(id *identity, needle string) bool {
	if strings.Contains(strings.ToLower(id.user), needle) {
		return true
	}
	return slices.ContainsFunc(id.groups, func(g string) bool { return strings.Contains(strings.ToLower(g), needle) })
}
