package csrqueue

import (
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// Change is what changed in the unfiltered queue for a set of changed CSRs
// (Live): the rows to send, in order, and the rows that are gone.
type Change struct {
	Total  int            // CSRs in the cluster
	Counts map[string]int // per state, over every CSR (the unfiltered tabs)
	// Rows are the rows to send: a request's, or (Storm set) a storm's group row.
	Rows []*Item
	// Removed are the rows gone, in order.
	Removed []Removal
}

// Removal is a row gone from the queue: a request's (by name) or a storm's
// group row (Group, by storm ID).
type Removal struct {
	Group bool
	ID    string
}

// Live works out, once for every open queue, what changed for the named CSRs
// among items (the whole cache): their rows as the unfiltered queue has them,
// the names no longer there, and the state counts over all CSRs.
//
// A request of a storm is not a row of the unfiltered queue: its storm's group
// row is sent instead, once however many of its requests changed, so a growing
// storm updates one count, not thousands of rows. A storm that fell below two
// requests sends its group row as removed and its last request's row.
func Live(items []*certificatesv1.CertificateSigningRequest, names []string, env Env) Change {
	cache := env.Cache
	if cache == nil {
		cache = &Cache{}
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
		out.Counts[facts[i].state]++
		if _, asked := byName[c.Name]; asked {
			byName[c.Name] = i
		}
	}

	sent := map[string]bool{} // storm IDs whose row is in out
	// stormOf is the storm a changed request was in before, from its own
	// fields when it is still there (signer, subject and requester never
	// change), else from the index before.
	stormOf := func(name string, i int) string {
		if i >= 0 {
			c, f := items[i], facts[i]
			if f.decoded(c, env.Checks).req != nil {
				return StormID(StormKey{Signer: c.Spec.SignerName, Subject: f.req.Subject, Requester: c.Spec.Username})
			}
			return ""
		}
		if st := before.Of(name); st != nil {
			return st.ID
		}
		return ""
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
	for _, name := range names {
		i := byName[name]
		if id := stormOf(name, i); id != "" && !sent[id] {
			sent[id] = true
			if st := storms.ByID(id); st != nil {
				rep := i
				if rep < 0 {
					rep = find(st.Oldest().Name)
				}
				if rep >= 0 {
					it := &Item{CSR: items[rep], State: Pending, f: facts[rep], v: v, Storm: st}
					it.ChecksOf = it
					out.Rows = append(out.Rows, it)
				}
			} else if old := before.ByID(id); old != nil {
				// A storm no more: its row goes, and what is left of it is a
				// row of its own again.
				out.Removed = append(out.Removed, Removal{Group: true, ID: id})
				for _, m := range old.Members {
					if j := find(m.Name); j >= 0 && storms.UID(m.Name) != "" && !slices.Contains(names, m.Name) {
						out.Rows = append(out.Rows, v.item(items[j], facts[j]))
					}
				}
			}
		}
		if i < 0 {
			out.Removed = append(out.Removed, Removal{ID: name})
			continue
		}
		if facts[i].state == Pending && storms.Of(name) != nil {
			continue // its group row stands for it
		}
		out.Rows = append(out.Rows, v.item(items[i], facts[i]))
	}
	return out
}
