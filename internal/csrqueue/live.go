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
	var ch Change
	cache.synced(items, env.Checks, func() { ch = cache.live(names, env) })
	return ch
}

// live is Live over the index (c.mu held, the index current): a map lookup
// per changed name, the counts the index keeps.
func (c *Cache) live(names []string, env Env) Change {
	x := c.index()
	storms := c.stormsNow()
	v := &view{checks: env.Checks, words: env.Words, storms: storms, policies: env.Policies, approver: env.Approver, now: env.Now,
		approvals: x.approvals}
	out := Change{Total: len(x.byName), Counts: x.stateCounts()}

	sent := map[string]bool{} // storm IDs whose row is in out
	// sendStorm puts the storm's group row in out, once.
	sendStorm := func(st *Storm, rep *entry) {
		if sent[st.ID] {
			return
		}
		sent[st.ID] = true
		if rep == nil {
			rep = x.byName[st.Oldest().Name]
		}
		if rep != nil {
			it := &Item{CSR: rep.obj, State: Pending, f: &rep.f, v: v, Storm: st}
			it.ChecksOf = it
			out.Rows = append(out.Rows, it)
		}
	}
	// stormsOf are the storms a changed request can be in, before or now:
	// from its own fields when it is still there (signer, subject and
	// requester never change; a request moves between its retry storm and
	// its requester's storm as the requester's count crosses
	// RequesterStormMin), else from the index before.
	stormsOf := func(name string, e *entry) []string {
		if e != nil {
			if req, _ := e.f.request(e.obj, env.Checks); req != nil {
				c := e.obj
				ids := IDsOf(c.Spec.SignerName, req.Subject, c.Spec.Username)
				return ids[:]
			}
			return nil
		}
		if st := storms.wasOf(name); st != nil {
			return []string{st.ID}
		}
		return nil
	}
	for _, name := range names {
		e := x.byName[name]
		for _, id := range stormsOf(name, e) {
			if sent[id] {
				continue
			}
			if st := storms.ByID(id); st != nil {
				sendStorm(st, e)
			} else if old := storms.wasByID(id); old != nil {
				// A storm no more: its row goes, and what is left of it is a
				// row of its own again, or a row of the storm it is in now.
				sent[id] = true
				out.Removed = append(out.Removed, Removal{Group: true, ID: id})
				for _, m := range old.Members() {
					j := x.byName[m.Name]
					if j == nil || storms.UID(m.Name) == "" || slices.Contains(names, m.Name) {
						continue
					}
					if now := storms.Of(m.Name); now != nil {
						sendStorm(now, nil)
					} else {
						out.Rows = append(out.Rows, v.item(j.obj, &j.f))
					}
				}
			}
		}
		if e == nil {
			out.Removed = append(out.Removed, Removal{ID: name})
			continue
		}
		if e.f.state() == Pending && storms.Of(name) != nil {
			continue // its group row stands for it
		}
		out.Rows = append(out.Rows, v.item(e.obj, &e.f))
	}
	return out
}
