// Package model holds the view models that templ components render. It is the
// contract between the presenters (which know Kubernetes) and the views (which
// know HTML): nothing here imports k8s.io or echo, and every string is already
// formatted for display.
package model

// Tone is the meaning of a badge or banner. Views map it to colour AND an icon
// or text, never colour alone.
type Tone string

const (
	ToneNeutral Tone = "neutral"
	ToneOK      Tone = "ok"      // Ready, Established, Issued, Approved
	TonePending Tone = "pending" // Pending, Approved-not-issued
	ToneWarning Tone = "warning"
	ToneError   Tone = "error" // Denied, Failed, Dangling
	ToneUnknown Tone = "unknown"
)

// Chrome is what the layout needs on every page.
type Chrome struct {
	Title       string
	User        string // who the console acts as, e.g. "kubernetes-admin"
	ReadOnly    bool
	CSRFToken   string // rendered into a <meta> and into every POST form
	Nav         []NavItem
	Breadcrumbs []Crumb
	Banners     []Banner // page-wide notices: forbidden kind, cluster unreachable, stale data
	Version     string   // server version, e.g. "v1.36.3"
	Live        Live     // live updates (see live.go)
	Search      string   // the global search box's text (the query on /search)
}

// NavItem is one kind in the left navigation.
type NavItem struct {
	Kind   string // kind id, e.g. "csrs": live count updates target it
	Label  string
	Href   string
	Count  string // "" when unknown (forbidden, not synced)
	Active bool
	// Shortcut is the key sequence that opens the page, e.g. "g c" ("" for
	// none): the link carries it for web/js/shortcuts.js and the "?" dialog lists it.
	Shortcut string
}

// Crumb is one breadcrumb; the last one has no Href.
type Crumb struct {
	Label string
	Href  string
}

// Banner is a page-wide notice.
type Banner struct {
	Tone    Tone
	Title   string
	Message string
	TestID  string // data-testid, e.g. "banner-forbidden"
}

// Badge is a short status label.
type Badge struct {
	Text string
	Tone Tone
	Hint string // title attribute: why this status
}

// HomePage lists every kind with its count.
type HomePage struct {
	Chrome    Chrome
	Attention Attention // first: what needs attention
	Kinds     []KindSummary
}

// KindSummary is one card on the home page.
type KindSummary struct {
	ID     string // "csrs"
	Title  string // "CertificateSigningRequests"
	Href   string
	Count  string // "12", or "" when not known
	Status Badge  // Synced / Forbidden / Error / Syncing
	Note   string // e.g. "3 pending" or the error text
}

// ListPage is a filterable, sortable table of one kind.
type ListPage struct {
	Chrome Chrome
	KindID string
	Title  string
	// Singular is the API kind ("CSRApprovalPolicy"), the "New" button's
	// words: a title's plural is not always its kind plus "s".
	Singular string
	Action   string // the list URL the filter form and sort links target, e.g. "/csrs"
	Query    string // current filter text
	// Selector is the label selector (kubectl -l syntax) the rows match, as
	// typed; SelectorError, when set, says why it is not one (the page answers 400).
	Selector      string
	SelectorError string
	// LintFilter is the lint= filter the rows match ("drift", "danger"),
	// LintWords how the page names it ("with stored-version drift"),
	// LintClearHref this view without it; LintError, when set, says why the
	// value is not a filter of this list (the page answers 400).
	LintFilter    string
	LintWords     string
	LintClearHref string
	LintError     string
	Sort          string // current sort column key
	Desc          bool
	Columns       []Column
	Rows          []Row
	Total         int    // objects of this kind in the cache
	Shown         int    // rows after filtering, over every page
	Pager         Pager  // which of them Rows holds (one page)
	View          string // the URL of this view (filter, sort and page): live updates fetch it again
	Empty         string // message when Rows is empty
	Forbidden     bool   // the user may not list this kind: no table, a banner says why
	NewHref       string // the "New" button's create page; "" hides it (read-only, or may not create)
	// LoadFollow, when set, is fetched once the page is shown (it waits for
	// the API server's load, which was not read yet) to replace the table.
	LoadFollow string
	// CleanupHref previews deleting what this view's label selector matches; "" hides it.
	CleanupHref string
	// TickAction is where "Delete selected…" posts the ticked rows (the
	// kind's cleanup preview); "" when the rows carry no tick boxes.
	TickAction string
}

// Column is a table header.
type Column struct {
	Key      string
	Label    string
	Sortable bool
	SortHref string // link that sorts by this column (toggles direction when already sorted)
	Sorted   string // "", "asc" or "desc": aria-sort
	Priority Priority
}

// Priority says when a list column gives way in a narrow table: the column
// hides, and its value moves to the second line of the row's name cell.
type Priority int

// Column priorities, by the width of the table (not the window: the
// navigation takes a quarter of a 1024 px window and none of a phone's).
const (
	PrimaryColumn   Priority = iota // always a column
	SecondaryColumn                 // a column when the table is 56rem wide (a 1280 px window)
	TertiaryColumn                  // a column when the table is 64rem wide (wider windows)
)

// Row is one object in a list.
type Row struct {
	ID    string // DOM id, e.g. "row-csrs-csr-abc" (stable, so live updates can swap it)
	Name  string
	Href  string
	Cells []Cell // one per Column; Cells[0] is the name cell
	// TickColumn: the row's table has a tick-box first column. Tick is the
	// value of the row's box ("<uid>/<name>", what the cleanup preview
	// parses); "" leaves the cell empty (an object the cache lost).
	TickColumn bool
	Tick       string
}

// Cell is one table cell: plain text, or a badge, or both.
type Cell struct {
	Text   string
	Badges []Badge
	Title  string // tooltip with the full value (e.g. RFC3339 time for an age)
	Mono   bool   // render in a monospace font (names, signers)
	// Note is a second, smaller line under the value (a priority level's
	// rejections by API server instance); "" for none.
	Note string
	// Priority and Label are the column's: a cell of a column that gives way
	// is repeated, labelled, on the second line of its row's name cell.
	Priority Priority
	Label    string
}

// DetailPage shows one object.
type DetailPage struct {
	Chrome     Chrome
	KindID     string
	KindTitle  string
	Name       string
	Status     Badge
	Fields     []Field   // key facts, in display order
	Sections   []Section // extra groups of facts (e.g. "Decoded request", "Webhooks")
	Insights   []Insight // optional rich sections after Sections (see insight.go)
	Problems   []Banner  // object-level problems (e.g. the CSR request is not valid PEM)
	Conditions []Condition
	YAML       string   // the object as YAML, managedFields removed ("" when YAMLHref loads it)
	YAMLHref   string   // a large object's YAML is loaded on demand from here
	YAMLSize   string   // the object's size, e.g. "a 1.2 MiB object"
	YAMLNote   string   // what the cached copy leaves out, when it does
	Actions    []Action // mutating actions the user may take; empty in read-only mode
	// ReplayHref replays the recorded writes against a draft of this
	// admission policy (it changes nothing, so read-only mode keeps it).
	ReplayHref string
	// WhatIfHref is the APF what-if (a FlowSchema's or priority level's
	// page; it changes nothing either).
	WhatIfHref string
	// MayUpdate and MayDelete: the signed-in user may update or delete this
	// object (access review, not read-only); the Edit and Delete links show only then.
	MayUpdate, MayDelete bool
}

// MoreValues is the rest of a long list that a row counts ("195 more") and
// fetches only when opened: Href answers the values as a fragment, PageHref
// is the page that shows them all (the disclosure's content without script).
type MoreValues struct {
	Count          int
	Href, PageHref string
}

// Field is one key/value fact.
type Field struct {
	Label  string
	Value  string
	More   []string // further values, behind "N more" (a <details>, no script)
	Badges []Badge
	Mono   bool
	Hint   string
}

// Section is a titled group of fields, or of a sub-table.
type Section struct {
	Title   string
	TestID  string
	Fields  []Field
	Columns []string   // optional sub-table
	Rows    [][]string // optional sub-table rows
	// Follow, when set, is fetched once the page is shown to replace the
	// section (its load was not read yet; see ListPage.LoadFollow).
	Follow string
}

// Condition is one entry of status.conditions.
type Condition struct {
	Type    string
	Status  string
	Tone    Tone
	Reason  string
	Message string
	Age     string
	Time    string // RFC3339, for the tooltip
}

// Action is a POST form button on a detail page (e.g. approve or deny a CSR).
type Action struct {
	Label   string
	URL     string // POST target
	Tone    Tone   // ToneOK for approve, ToneError for deny/delete
	TestID  string
	Confirm string // confirmation question; "" for none
	// WithReason shows a text input "message" the server writes into the result.
	WithReason bool
	// UID is sent as the field "uid": the metadata.uid of the object the page
	// shows, so the server acts on that object only ("" sends none).
	UID string
}

// ErrorPage is rendered by the one HTTP error handler.
type ErrorPage struct {
	Chrome  Chrome
	Status  int
	Title   string
	Message string
	Causes  []string // API server field causes, if any
}

// LoginPage is shown to a browser without a session.
type LoginPage struct {
	Title   string
	Message string
	// Mode is the sign-in mode: "local" (one-time URL), "token" (a form to
	// paste a bearer token) or "proxy" (sign in through the proxy).
	Mode      string
	CSRFToken string // token mode: the form's CSRF token
	// Provider (oidc mode) names the OpenID provider the sign-in link goes to.
	Provider string
	// ContinueURL (oidc mode, once signed in) is where the page goes on to.
	ContinueURL string
}
