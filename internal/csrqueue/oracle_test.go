package csrqueue

// The queue engine as it was before its indexes were kept on change (issue
// 27): every view loaded the facts of every CSR and sorted every match. It
// stays here as the oracle of the property test (index_property_test.go),
// which holds the indexed engine to the same rows, order, counts and pages.

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// oracleEnv is Env with the oracle's own cache.
type oracleEnv struct {
	Env
	oracle *oracleCache
}

// oracleCache is the old Cache: facts by object pointer, the storm index
// rebuilt whenever the set of objects changed.
type oracleCache struct {
	mu      sync.Mutex
	entries map[*certificatesv1.CertificateSigningRequest]*facts
	view    uint64
	lastLen int
	storms  *Storms
	before  *Storms
	seen    map[*facts]uint64 // the view each object was last given in
}

// Run lays out one view of the queue: filters, state tabs' counts, pending
// first (oldest first), then approved but not issued (longest waiting
// first), then the decided (most recent first); each storm one row unless
// the view is of one group; the page asked for.
func oracleRun(items []*certificatesv1.CertificateSigningRequest, q Query, env oracleEnv) Result {
	cache := env.oracle
	if cache == nil {
		cache = &oracleCache{}
	}
	// One map lookup per CSR; the grouping itself is rebuilt only when the
	// CSRs changed since the last view.
	facts, storms := cache.load(items, env.Checks)
	v := &view{checks: env.Checks, words: env.Words, storms: storms}
	limit, _ := ageLimit(q.Age)
	needle := strings.ToLower(q.Filter)
	requester := strings.ToLower(q.Requester)

	res := Result{Total: len(items), Counts: map[string]int{}, Signers: map[string]int{}, Storms: storms}
	var kept []*Item
	// Item records come in chunks rather than one allocation each: a view of
	// 50,000 CSRs otherwise spends its time in the allocator and the GC; a
	// chunk bounds what a narrow filter allocates for nothing.
	var slab []Item
	for i, c := range items {
		res.Signers[c.Spec.SignerName]++
		f := facts[i]
		state := f.state()
		if !res.Decidable && env.MayDecide != nil && state == Pending && env.MayDecide(c.Spec.SignerName) {
			res.Decidable = true
		}
		if env.Labels != nil && !env.Labels.Matches(labels.Set(c.Labels)) {
			continue
		}
		if q.Signer != "" && c.Spec.SignerName != q.Signer {
			continue
		}
		if !ageMatches(limit, c.CreationTimestamp.Time, env.Now) {
			continue
		}
		if requester != "" && !requesterMatches(c, requester) {
			continue
		}
		if q.Group != "" && !storms.InSet(q.Group, c.Name) {
			continue
		}
		if len(slab) == cap(slab) {
			slab = make([]Item, 0, min(1024, len(items)))
		}
		slab = append(slab, Item{CSR: c, State: state, Decided: f.decided(c), f: f, v: v})
		it := &slab[len(slab)-1]
		if state == Pending {
			it.Bad = f.decoded(c, env.Checks).req == nil
		}
		if needle != "" && !it.matches(needle, env.Now) {
			continue
		}
		res.Counts[state]++
		if q.State != "" && state != q.State {
			continue
		}
		kept = append(kept, it)
	}

	sortKey := cmp.Or(q.Sort, SortQueue)
	if sortKey == SortChecks {
		for _, it := range kept {
			it.Findings()
		}
	}
	slices.SortStableFunc(kept, func(a, b *Item) int {
		r := oracleCompareBy(sortKey, a, b, env.Words)
		if r == 0 {
			r = oracleCompareQueue(a, b)
		}
		if q.Desc {
			return -r
		}
		return r
	})

	res.Matched = len(kept)
	// A storm is one row, where its first request in this order would be; a
	// view of one group shows its requests one by one.
	if q.Group == "" {
		kept = oracleCollapse(kept, storms)
	} else {
		res.Group = storms.ByID(q.Group)
	}
	res.Rows = len(kept)
	lo, hi, page := window(q.Page, env.PageSize, len(kept))
	res.Page, res.Items = page, kept[lo:hi]
	return res
}

// compareBy orders two items by a sort key, ascending.
func oracleCompareBy(key string, a, b *Item, w Words) int {
	switch key {
	case SortAge: // youngest first, as kubectl sorts ages
		return b.CSR.CreationTimestamp.Time.Compare(a.CSR.CreationTimestamp.Time)
	case SortSigner:
		return cmp.Compare(a.CSR.Spec.SignerName, b.CSR.Spec.SignerName)
	case SortRequestor:
		return cmp.Compare(a.CSR.Spec.Username, b.CSR.Spec.Username)
	case SortDuration:
		return cmp.Compare(expiration(a.CSR), expiration(b.CSR))
	case SortState:
		return cmp.Compare(w.Status(a.State), w.Status(b.State))
	case SortChecks: // most severe first, then the most findings; clean rows last
		return cmp.Compare(checksRank(a.findings), checksRank(b.findings))
	}
	return oracleCompareQueue(a, b)
}

// queuePart is the part of the queue an item belongs to. Pending requests
// whose spec.request does not decode come after the others: the API server
// refuses every approval or denial of them, so they are not work to do now.
func oracleQueuePart(it *Item) int {
	switch {
	case it.State == Pending && !it.Bad:
		return 0
	case it.State == Pending:
		return 1
	case it.State == Approved:
		return 2
	}
	return 3
}

// compareQueue is the queue order: pending (oldest first), approved but not
// issued (longest waiting first), then decided (most recently decided first);
// the name breaks ties so that the order is total and its reverse exact.
func oracleCompareQueue(a, b *Item) int {
	ga, gb := oracleQueuePart(a), oracleQueuePart(b)
	if ga != gb {
		return cmp.Compare(ga, gb)
	}
	var r int
	switch ga {
	case 0, 1:
		r = a.CSR.CreationTimestamp.Time.Compare(b.CSR.CreationTimestamp.Time)
	case 2:
		r = cmpTime(a.Decided, a.CSR.CreationTimestamp.Time).Compare(cmpTime(b.Decided, b.CSR.CreationTimestamp.Time))
	default:
		r = cmpTime(b.Decided, b.CSR.CreationTimestamp.Time).Compare(cmpTime(a.Decided, a.CSR.CreationTimestamp.Time))
	}
	if r != 0 {
		return r
	}
	return cmp.Compare(a.CSR.Name, b.CSR.Name)
}

// collapseStorms keeps, of each storm's pending requests in kept (in order),
// the first, marked to stand for the storm's group row; the checks shown are
// those of the storm's newest request (the one "approve newest" approves)
// when it is in kept.
func oracleCollapse(kept []*Item, storms *Storms) []*Item {
	if storms.Len() == 0 {
		return kept
	}
	first := map[string]*Item{}
	out := kept[:0:0]
	for _, it := range kept {
		var st *Storm
		if it.State == Pending && !it.Bad {
			st = storms.Of(it.CSR.Name)
		}
		if st == nil {
			out = append(out, it)
			continue
		}
		rep, seen := first[st.ID]
		if !seen {
			rep = &Item{CSR: it.CSR, State: it.State, Decided: it.Decided, f: it.f, v: it.v, Storm: st, ChecksOf: it}
			first[st.ID] = rep
			out = append(out, rep)
		}
		if it.CSR.Name == st.Newest().Name {
			rep.ChecksOf = it
		}
	}
	return out
}

// load returns the facts of every item, in order, creating the missing ones,
// and the storm index of the items. The index is rebuilt (O(n)) only when the
// set of objects differs from the previous call's: the informer hands out a
// new object for every change, so the same pointers mean the same cluster.
// Entries of objects no longer given (deleted, or replaced by a new version)
// are dropped once they are as many as the live ones.
func (c *oracleCache) load(items []*certificatesv1.CertificateSigningRequest, env Checks) ([]*facts, *Storms) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[*certificatesv1.CertificateSigningRequest]*facts, len(items))
		c.seen = map[*facts]uint64{}
	}
	c.view++
	changed := c.storms == nil || len(items) != c.lastLen
	out := make([]*facts, len(items))
	for i, it := range items {
		f := c.entries[it]
		if f == nil {
			f = newFacts(it)
			c.entries[it] = f
		}
		changed = changed || c.seen[f] != c.view-1
		c.seen[f] = c.view
		out[i] = f
	}
	c.lastLen = len(items)
	if changed {
		c.before, c.storms = c.storms, oracleGroupStorms(items, out, env)
	}
	if len(c.entries) > 2*len(items)+64 {
		next := make(map[*certificatesv1.CertificateSigningRequest]*facts, len(items))
		for i, it := range items {
			next[it] = out[i]
		}
		c.entries = next
	}
	return out, c.storms
}

// previous is the storm index the last rebuild replaced.
func (c *oracleCache) previous() *Storms {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.before
}

// groupStorms groups the pending requests that decode.
func oracleGroupStorms(items []*certificatesv1.CertificateSigningRequest, facts []*facts, env Checks) *Storms {
	var pending []Member
	for i, c := range items {
		if f := facts[i]; f.state() == Pending && f.decoded(c, env).req != nil {
			pending = append(pending, Member{Name: c.Name, UID: string(c.UID), Signer: c.Spec.SignerName,
				Subject: f.pending.req.Subject, Requester: c.Spec.Username, Created: c.CreationTimestamp.Time})
		}
	}
	return GroupStorms(pending)
}

// Live works out, once for every open queue, what changed for the named CSRs
// among items (the whole cache): their rows as the unfiltered queue has them,
// the names no longer there, and the state counts over all CSRs.
//
// A request of a storm is not a row of the unfiltered queue: its storm's group
// row is sent instead, once however many of its requests changed, so a growing
// storm updates one count, not thousands of rows. A storm that fell below two
// requests sends its group row as removed and its last request's row.
func oracleLive(items []*certificatesv1.CertificateSigningRequest, names []string, env oracleEnv) Change {
	cache := env.oracle
	if cache == nil {
		cache = &oracleCache{}
	}
	facts, storms := cache.load(items, env.Checks)
	before := cache.previous()
	v := &view{checks: env.Checks, words: env.Words, storms: storms}
	byName := make(map[string]int, len(names))
	for _, n := range names {
		byName[n] = -1
	}
	out := Change{Total: len(items), Counts: map[string]int{}}
	for i, c := range items {
		out.Counts[facts[i].state()]++
		if _, asked := byName[c.Name]; asked {
			byName[c.Name] = i
		}
	}

	index := map[string]int{} // the items found by name beyond names, for storms that lost requests
	find := func(name string) int {
		if i, ok := byName[name]; ok && i >= 0 {
			return i
		}
		if len(index) == 0 {
			// Once per change that shrank a storm, never per view.
			for i, c := range items {
				index[c.Name] = i
			}
		}
		if i, ok := index[name]; ok {
			return i
		}
		return -1
	}
	sent := map[string]bool{} // storm IDs whose row is in out
	sendStorm := func(st *Storm, rep int) {
		if sent[st.ID] {
			return
		}
		sent[st.ID] = true
		if rep < 0 {
			rep = find(st.Oldest().Name)
		}
		if rep >= 0 {
			it := &Item{CSR: items[rep], State: Pending, f: facts[rep], v: v, Storm: st}
			it.ChecksOf = it
			out.Rows = append(out.Rows, it)
		}
	}
	// stormsOf are the storms a changed request can be in, before or now
	// (its requester's and its retry storm), from its own fields when it is
	// still there, else from the index before.
	stormsOf := func(name string, i int) []string {
		if i >= 0 {
			c, f := items[i], facts[i]
			if d := f.decoded(c, env.Checks); d.req != nil {
				ids := IDsOf(c.Spec.SignerName, d.req.Subject, c.Spec.Username)
				return ids[:]
			}
			return nil
		}
		if st := before.Of(name); st != nil {
			return []string{st.ID}
		}
		return nil
	}
	for _, name := range names {
		i := byName[name]
		for _, id := range stormsOf(name, i) {
			if sent[id] {
				continue
			}
			if st := storms.ByID(id); st != nil {
				sendStorm(st, i)
			} else if old := before.ByID(id); old != nil {
				// A storm no more: its row goes, and what is left of it is a
				// row of its own again, or its new storm's row.
				sent[id] = true
				out.Removed = append(out.Removed, Removal{Group: true, ID: id})
				for _, m := range old.Members() {
					j := find(m.Name)
					if j < 0 || storms.UID(m.Name) == "" || slices.Contains(names, m.Name) {
						continue
					}
					if now := storms.Of(m.Name); now != nil {
						sendStorm(now, -1)
					} else {
						out.Rows = append(out.Rows, v.item(items[j], facts[j]))
					}
				}
			}
		}
		if i < 0 {
			out.Removed = append(out.Removed, Removal{ID: name})
			continue
		}
		if facts[i].state() == Pending && storms.Of(name) != nil {
			continue // its group row stands for it
		}
		out.Rows = append(out.Rows, v.item(items[i], facts[i]))
	}
	return out
}
