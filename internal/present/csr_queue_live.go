package present

import (
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// CSRQueueLive lays out, once for every open queue, what changed for the
// named CSRs among items (the whole cache): their rows as the queue renders
// them, the names no longer there, and the state tabs' counts over all CSRs
// (what an unfiltered queue shows). A row is selectable when the request is
// pending and decodes; whether the user may decide for its signer is the
// page's business (a row that replaces one keeps the old one's selectability:
// the signer and the request of a CSR never change).
func CSRQueueLive(items []*certificatesv1.CertificateSigningRequest, names []string, env CSRQueueEnv) model.CSRLiveRows {
	cache := env.Cache
	if cache == nil {
		cache = &CSRQueueCache{}
	}
	facts := cache.facts(items)
	byName := make(map[string]int, len(items))
	var pending []csr.Pending
	counts := map[string]int{}
	for i, c := range items {
		byName[c.Name] = i
		f := facts[i]
		counts[f.state]++
		if f.state == CSRPending {
			if f.decoded(c, env.Checks).req != nil {
				pending = append(pending, csr.Pending{Name: c.Name, Signer: c.Spec.SignerName, Subject: f.req.Subject})
			}
		}
	}
	dups := csr.Duplicates(pending)

	out := model.CSRLiveRows{Total: len(items), Tabs: csrTabs(CSRQueueQuery{}, counts, "/csrs"),
		Columns: csrQueueHeaders(CSRQueueQuery{}, csrQueueSortDefault, "/csrs")}
	for _, name := range names {
		i, ok := byName[name]
		if !ok {
			out.Removed = append(out.Removed, "row-csrs-"+name)
			continue
		}
		c, f := items[i], facts[i]
		it := &queueItem{c: c, f: f, state: f.state, status: f.status, decided: f.decided}
		if it.state == CSRPending {
			it.bad = f.decoded(c, env.Checks).req == nil
		}
		row := *it.build(dups, env).row
		row.Selectable = it.state == CSRPending && !it.bad
		out.Rows = append(out.Rows, row)
	}
	return out
}
