// Package attention works out what an admin opening the console should look
// at first (issue 30, point 5): pending CSRs per signer and their oldest,
// storms, signers nothing approves, webhooks failing open or slow,
// webhook configurations with danger lints, priority levels rejecting, CRDs
// with stored-version drift, kinds whose watch is lost.
//
// Each rule is a pure function of facts the console already keeps: the CSR
// queue's storm index (csrqueue), the shared APF sampler's load (apfload),
// the kind statuses of the informer cache, and the findings kept per object
// change for CRDs and webhook configurations (Kept, index.go), so that a
// view reads what changed since the last one, never every object. Words
// belong to internal/present; this package counts, ages, ranks and links.
package attention

import (
	"cmp"
	"slices"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Severity ranks items and entries: the most severe first.
type Severity int

const (
	Notice Severity = iota
	Warning
	Danger
)

// Concern names one kind of item; the page shows at most one item per concern.
type Concern string

const (
	PendingCSRs       Concern = "pending-csrs"
	CSRStorms         Concern = "csr-storms"
	UnapprovedSigners Concern = "unapproved-signers"
	WebhooksFailing   Concern = "webhooks-failing"
	WebhookLints      Concern = "webhook-lints"
	LevelsRejecting   Concern = "levels-rejecting"
	CRDDrift          Concern = "crd-drift"
	WatchesLost       Concern = "watches-lost"
)

// MaxEntries bounds the entries an item lists: the item's link leads to the
// rest.
const MaxEntries = 5

// Item is one concern that needs attention.
type Item struct {
	Concern  Concern
	Severity Severity
	// Kinds are the kinds the item reads: it is shown only to users who may
	// list every one of them.
	Kinds []kube.KindID
	// Count is how many things the item is about (requests, storms,
	// webhooks…); Entries the first MaxEntries of them, most severe first.
	Count   int
	Entries []Entry
	// Oldest is the age of the oldest thing counted, when the concern has
	// one (pending CSRs); zero otherwise.
	Oldest time.Duration
	// Href is the filtered view of everything the item counts (the closest
	// view when no filter selects exactly them).
	Href string
	// ByKind is set by Visible when it gathers the items of several kinds
	// that each had a view of their own (Href is then empty): each kind's
	// view and count, in the kinds' order, so none of them is left unlinked.
	ByKind []KindLink
}

// KindLink is one kind's view of a gathered item.
type KindLink struct {
	Kind  kube.KindID
	Count int
	Href  string
}

// Entry is one thing an item is about.
type Entry struct {
	Name     string // the object, signer, level or kind
	Severity Severity
	Count    int           // requests of a signer or storm; 0 when not counted
	Age      time.Duration // of the oldest request, when counted
	// Rate is per second (rejections, or calls failed open within the
	// sampler's window); Seconds a latency (p99).
	Rate, Seconds float64
	// Instance is the API server instance that measured Rate ("" when the
	// sampler does not say which).
	Instance string
	// Note is what was found, as short facts (lint titles, versions).
	Note []string
	Href string
}

// Visible keeps the items whose kinds may all be listed (may answers for
// one kind: the caller's cached access reviews), then joins the items of one
// concern (lost watches and the webhook concerns come one per kind, so that
// each kind is shown only to who may list it) and sorts them.
func Visible(items []Item, may func(kube.KindID) bool) []Item {
	out := items[:0:0]
	at := map[Concern]int{}
	for _, it := range items {
		if slices.ContainsFunc(it.Kinds, func(k kube.KindID) bool { return !may(k) }) {
			continue
		}
		i, ok := at[it.Concern]
		if !ok {
			at[it.Concern] = len(out)
			out = append(out, it)
			continue
		}
		j := &out[i]
		if j.Href != "" { // the first item gathered: its view becomes one of several
			j.ByKind = []KindLink{{Kind: j.Kinds[0], Count: j.Count, Href: j.Href}}
		}
		if it.Href != "" {
			j.ByKind = append(j.ByKind, KindLink{Kind: it.Kinds[0], Count: it.Count, Href: it.Href})
		}
		j.Count += it.Count
		j.Oldest = max(j.Oldest, it.Oldest)
		j.Kinds = append(slices.Clip(j.Kinds), it.Kinds...)
		j.Entries, j.Severity = top(append(slices.Clip(j.Entries), it.Entries...))
		j.Href = "" // several kinds: ByKind links each kind's view
	}
	for i := range out {
		slices.SortFunc(out[i].ByKind, func(a, b KindLink) int { return cmp.Compare(a.Kind, b.Kind) })
	}
	Sort(out)
	return out
}

// Sort orders items most severe first, then by the order of the concerns
// above (CSRs first: they wait on a person).
func Sort(items []Item) {
	rank := map[Concern]int{PendingCSRs: 0, CSRStorms: 1, UnapprovedSigners: 2, WebhooksFailing: 3,
		WebhookLints: 4, LevelsRejecting: 5, CRDDrift: 6, WatchesLost: 7}
	slices.SortStableFunc(items, func(a, b Item) int {
		return cmp.Or(cmp.Compare(b.Severity, a.Severity), cmp.Compare(rank[a.Concern], rank[b.Concern]))
	})
}

// top sorts entries most severe first (then by count, then by name) and keeps
// MaxEntries; it returns them and the highest severity.
func top(entries []Entry) ([]Entry, Severity) {
	slices.SortFunc(entries, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(b.Severity, a.Severity), cmp.Compare(b.Count, a.Count),
			cmp.Compare(b.Rate, a.Rate), cmp.Compare(a.Name, b.Name))
	})
	sev := Notice
	if len(entries) > 0 {
		sev = entries[0].Severity
	}
	if len(entries) > MaxEntries {
		entries = entries[:MaxEntries:MaxEntries]
	}
	return entries, sev
}
