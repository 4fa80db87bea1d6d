package model

// Attention is the home page's first section: what needs attention, most
// severe first, each item linking its filtered view. Live updates replace
// it whole (its ID), rendered once per change for every tab of the same
// access.
type Attention struct {
	Items []AttentionItem
	// Notes say what the items could not include for this user (the API
	// server's load not shown, who may approve not readable).
	Notes []string
}

// AttentionItem is one concern.
type AttentionItem struct {
	ID      string // the concern, e.g. "pending-csrs" (data-testid "attention-<ID>")
	Tone    Tone   // ToneError, ToneWarning or TonePending
	Label   string // the tone as words ("Danger", "Warning", "Notice"): never colour alone
	Title   string // "12 pending CertificateSigningRequests"
	Summary string // "the oldest waits for 3h"
	Href    string // the filtered view; "" when the entries link their own
	Link    string // the link's text
	// Links replace Href when the item gathers several kinds, each with a
	// view of its own: Link is then their heading.
	Links   []AttentionLink
	Entries []AttentionEntry
	More    string // "and 7 more", when the entries are cut
}

// AttentionLink is one kind's view of an item: "ValidatingWebhookConfigurations (3)".
type AttentionLink struct {
	Href string
	Text string
}

// AttentionEntry is one thing an item is about.
type AttentionEntry struct {
	Name   string
	Href   string
	Detail string
	Tone   Tone
}
