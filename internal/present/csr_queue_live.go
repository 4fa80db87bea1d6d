package present

import (
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// CSRQueueLive lays out, once for every open queue, what changed for the
// named CSRs among items (the whole cache): their rows as the queue renders
// them, the names no longer there, and the state tabs' counts over all CSRs
// (what an unfiltered queue shows). A row is selectable when the request is
// pending and decodes; whether the user may decide for its signer is the
// page's business (a row that replaces one keeps the old one's selectability:
// the signer and the request of a CSR never change).
//
// A request of a storm is not a row of the unfiltered queue: its storm's group
// row is sent instead, once however many of its requests changed, so a growing
// storm updates one count, not thousands of rows. A storm that fell below two
// requests sends its group row as removed and its last request's row.
func CSRQueueLive(items []*certificatesv1.CertificateSigningRequest, names []string, env CSRQueueEnv) model.CSRLiveRows {
	cache := env.Cache
	if cache == nil {
		cache = &CSRQueueCache{}
	}
	facts, storms := cache.load(items, env.Checks)
	cache.mu.Lock()
	before := cache.before
	cache.mu.Unlock()
	byName := make(map[string]int, len(names))
	for _, n := range names {
		byName[n] = -1
	}
	counts := map[string]int{}
	for i, c := range items {
		counts[facts[i].state]++
		if _, asked := byName[c.Name]; asked {
			byName[c.Name] = i
		}
	}

	out := model.CSRLiveRows{Total: len(items), Tabs: csrTabs(CSRQueueQuery{}, counts, urls.CSRs),
		Columns: csrQueueHeaders(CSRQueueQuery{}, csrQueueSortDefault, urls.CSRs)}
	sent := map[string]bool{} // storm IDs whose row is in out
	// stormOf is the storm a changed request was in before, from its own
	// fields when it is still there (signer, subject and requester never
	// change), else from the index before.
	stormOf := func(name string, i int) string {
		if i >= 0 {
			c, f := items[i], facts[i]
			if f.decoded(c, env.Checks).req != nil {
				return csr.StormID(csr.StormKey{Signer: c.Spec.SignerName, Subject: f.req.Subject, Requester: c.Spec.Username})
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
					it := &queueItem{c: items[rep], f: facts[rep], state: CSRPending, status: pendingBadge, storm: st}
					it.checksOf = it
					// The actions are offered as the selection boxes are: the
					// page keeps them only where it had them (live-csr.js).
					genv := env
					genv.MayDecide = func(string) bool { return true }
					out.Rows = append(out.Rows, *groupRow(it, storms, genv))
				}
			} else if old := before.ByID(id); old != nil {
				// A storm no more: its row goes, and what is left of it is a
				// row of its own again.
				out.Removed = append(out.Removed, "row-csrs-group-"+id)
				for _, m := range old.Members {
					if j := find(m.Name); j >= 0 && storms.UID(m.Name) != "" && !slices.Contains(names, m.Name) {
						out.Rows = append(out.Rows, liveRow(items[j], facts[j], storms, env))
					}
				}
			}
		}
		if i < 0 {
			out.Removed = append(out.Removed, "row-csrs-"+name)
			continue
		}
		if facts[i].state == CSRPending && storms.Of(name) != nil {
			continue // its group row stands for it
		}
		out.Rows = append(out.Rows, liveRow(items[i], facts[i], storms, env))
	}
	return out
}

// liveRow is the queue row of one CSR.
func liveRow(c *certificatesv1.CertificateSigningRequest, f *csrFacts, storms *csr.Storms, env CSRQueueEnv) model.CSRRow {
	it := &queueItem{c: c, f: f, state: f.state, status: f.status, decided: f.decided}
	if it.state == CSRPending {
		it.bad = f.decoded(c, env.Checks).req == nil
	}
	row := *it.build(storms, env).row
	row.Selectable = it.state == CSRPending && !it.bad
	return row
}
