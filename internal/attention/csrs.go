package attention

import (
	"cmp"
	"slices"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/approvers"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// PendingWarnAge is the age past which a pending request makes its signer's
// entry a warning: a person (or controller) should have decided by then.
const PendingWarnAge = time.Hour

// Pending is the pending CSRs per signer with the oldest's age; each entry
// links the pending queue filtered by its signer.
func Pending(signers []csrqueue.SignerPending, now time.Time) (Item, bool) {
	if len(signers) == 0 {
		return Item{}, false
	}
	it := Item{Concern: PendingCSRs, Kinds: []kube.KindID{kube.CSRs},
		Href: (csrqueue.Query{State: csrqueue.Pending}).Href(urls.CSRs)}
	entries := make([]Entry, 0, len(signers))
	for _, s := range signers {
		age := now.Sub(s.Oldest.Created)
		sev := Notice
		if age > PendingWarnAge {
			sev = Warning
		}
		it.Count += s.Count
		it.Oldest = max(it.Oldest, age)
		entries = append(entries, Entry{Name: s.Signer, Severity: sev, Count: s.Count, Age: age,
			Href: (csrqueue.Query{State: csrqueue.Pending, Signer: s.Signer}).Href(urls.CSRs)})
	}
	it.Entries, it.Severity = top(entries)
	return it, true
}

// Storms are the storms of pending requests (one client asking again and
// again); each entry links the queue filtered to its members, the item the
// pending queue, where each storm is one row. largest are the largest storms
// (TopStorms), count how many there are.
func Storms(largest []*csrqueue.Storm, count int, now time.Time) (Item, bool) {
	if count == 0 {
		return Item{}, false
	}
	it := Item{Concern: CSRStorms, Kinds: []kube.KindID{kube.CSRs}, Count: count, Severity: Warning,
		Href: (csrqueue.Query{State: csrqueue.Pending}).Href(urls.CSRs)}
	entries := make([]Entry, 0, len(largest))
	for _, st := range largest {
		name := st.Key.Requester + " → " + st.Key.Signer
		if !st.ByRequester {
			name = st.Key.Subject + " (" + st.Key.Requester + ")"
		}
		age := now.Sub(st.Oldest().Created)
		it.Oldest = max(it.Oldest, age)
		entries = append(entries, Entry{Name: name, Severity: Warning, Count: st.Size(), Age: age,
			Note: []string{st.Key.Signer}, Href: (csrqueue.Query{State: csrqueue.Pending, Group: st.ID}).Href(urls.CSRs)})
	}
	it.Entries, _ = top(entries)
	return it, true
}

// TopStorms are the MaxEntries largest storms (then by ID): O(storms), so
// Sources keeps them per build of the storm index, not per view.
func TopStorms(all []*csrqueue.Storm) []*csrqueue.Storm {
	slices.SortFunc(all, func(a, b *csrqueue.Storm) int {
		return cmp.Or(cmp.Compare(b.Size(), a.Size()), cmp.Compare(a.ID, b.ID))
	})
	return slices.Clip(all[:min(len(all), MaxEntries)])
}

// Unapproved are the signers with pending requests that nobody was given the
// job of approving, as "who approves this signer?" says it: no subject but
// the superusers may approve (Danger: they stay pending unless a member of
// system:masters decides), or only administrators who may approve every
// signer (Warning: they stay pending until one of them decides). gap
// answers for one signer (ok false: someone may approve it in particular);
// it is nil when who may approve is not known (RBAC not readable).
func Unapproved(signers []csrqueue.SignerPending, gap func(signer string) (Severity, bool), now time.Time) (Item, bool) {
	if gap == nil {
		return Item{}, false
	}
	it := Item{Concern: UnapprovedSigners, Kinds: []kube.KindID{kube.CSRs}, Href: urls.CSRApproversRoute}
	var entries []Entry
	for _, s := range signers {
		sev, ok := gap(s.Signer)
		if !ok {
			continue
		}
		it.Count++
		age := now.Sub(s.Oldest.Created)
		it.Oldest = max(it.Oldest, age)
		note := "only system:masters may approve"
		if sev < Danger {
			note = "only administrators who may approve every signer may approve"
		}
		entries = append(entries, Entry{Name: s.Signer, Severity: sev, Count: s.Count, Age: age, Note: []string{note},
			Href: urls.CSRApprovers(s.Signer)})
	}
	if it.Count == 0 {
		return Item{}, false
	}
	it.Entries, it.Severity = top(entries)
	return it, true
}

// GapOf is Unapproved's answer from approvers.Who's: who may approve.
func GapOf(a approvers.Answer) (Severity, bool) {
	switch {
	case a.Nobody():
		return Danger, true
	case !a.Specific():
		return Warning, true
	}
	return Notice, false
}
