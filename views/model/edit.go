package model

// EditPage is the YAML editor of one object, or of a new one (Create true).
// It is rendered again after every Preview, failed Apply, conflict and rebase,
// always with the user's own text in YAML.
type EditPage struct {
	Chrome    Chrome
	KindID    string
	KindTitle string // "CSIDrivers"
	Kind      string // the API kind: "CSIDriver"
	Name      string // "" while creating
	Create    bool

	YAML            string // the textarea's content
	ResourceVersion string // the version the user started from (hidden field); "" when creating
	Base            string // the text the user started from, encoded (hidden field), for conflict diffs
	ShowStatus      bool   // the text includes status (hidden field "status")
	StatusURL       string // link that reloads the editor with status shown or hidden ("" when creating)
	ApplyURL        string // the form's action
	PreviewURL      string // the Preview button's formaction ("" when the form field op selects it)
	RebaseURL       string // target of the "rebase onto current" button, shown with a Conflict
	CancelURL       string
	ApplyLabel      string // "Apply" or "Create"

	Notices  []Banner    // results that are not problems: "Rebased onto version 123"
	Problems []EditError // local errors and the API server's errors, next to the editor
	Warnings []string    // Warning headers of the last call
	Preview  *Diff       // what the server would store, after a successful Preview
	Conflict *Conflict   // set after a 409: what changed on the server

	Docs     []SchemaNode // the kind's documented fields (OpenAPI v3), beside the editor
	DocsNote string       // why Docs is empty, e.g. the document could not be read

	// Mode is how Apply writes an existing object: WriteUpdate (the default)
	// or WriteApply (server-side apply). Empty while creating.
	Mode WriteMode
	// ApplyConflicts is set after a server-side apply was refused because
	// other field managers own fields the text changes; the user may then
	// apply again with force after confirming.
	ApplyConflicts []ManagerConflict
	// Namespace is the namespace of a namespaced custom resource, shown in the heading.
	Namespace string
	// MaxBytes is the most the server accepts in one editor request; the
	// script refuses to send more and says so.
	MaxBytes int

	// ReplayURL is the "Replay against recorded writes" button's
	// formaction: the text replayed before it is applied (handlers/replay,
	// issue 45); "" for a kind without a replay. ReplayWindows are the
	// windows it offers, the chosen one Selected.
	ReplayURL string
	// WhatIfURL is the "Simulate on recorded traffic" button's formaction:
	// a FlowSchema's or priority level's text as the APF what-if's draft
	// (handlers/whatif); "" for other kinds.
	WhatIfURL     string
	ReplayWindows []Option
	// Replay is the text's replay after the button: its progress, result
	// or why it did not run (the replay page's outcome), beside the text.
	Replay *ReplayPage
}

// WriteMode is how the editor writes an existing object.
type WriteMode string

const (
	// WriteUpdate replaces the object, guarded by the resourceVersion the user
	// started from (a change made meanwhile is a conflict, a deleted line is a
	// removed field).
	WriteUpdate WriteMode = "update"
	// WriteApply is server-side apply with field manager clusterdesk: only the
	// fields in the text are merged; fields other managers own conflict.
	WriteApply WriteMode = "apply"
)

// ManagerConflict is one field manager whose fields a server-side apply would
// take over, with those fields.
type ManagerConflict struct {
	Manager string
	Fields  []Cause
}

// EditError is one error shown next to the editor: a local check (nothing was
// sent) or the API server's answer with its field causes.
type EditError struct {
	Title   string // "Invalid YAML", "Forbidden", "Invalid"
	Message string
	Local   bool // true: clusterdesk refused before sending anything
	Line    int  // 1-based line in the editor text the message points at; 0 when unknown
	Causes  []Cause
}

// Cause is one field cause of an API error (details.causes).
type Cause struct {
	Field   string
	Message string
	Line    int // 1-based line of Field in the editor text; 0 when not found
}

// Diff is a unified diff as view lines.
type Diff struct {
	Title   string // "Live → what the API server would store"
	From    string // label of the old side
	To      string // label of the new side
	Added   int
	Removed int
	Lines   []DiffLine // empty when the two sides are equal, or too large to diff
	Note    string     // e.g. "No change: the server would store the object as it is."
	// TooLarge: the sides differ in too many lines to diff; Note says how many.
	TooLarge bool
}

// DiffKind is the kind of a diff line.
type DiffKind string

const (
	DiffContext DiffKind = "context"
	DiffAdded   DiffKind = "added"
	DiffRemoved DiffKind = "removed"
	DiffHunk    DiffKind = "hunk" // "@@ -3,7 +3,8 @@" separator
)

// DiffLine is one line of a diff with its line numbers ("" where it has none).
type DiffLine struct {
	Kind DiffKind
	Old  string
	New  string
	Text string
}

// Conflict is what the editor shows after the API server refused an Apply with
// 409 Conflict: the message, and what changed on the server since the user loaded it.
type Conflict struct {
	Message        string
	CurrentVersion string // resourceVersion on the server now
	Changes        Diff   // the version the user started from → the current one
}

// DeletePage confirms the deletion of one object after a dry run.
type DeletePage struct {
	Chrome    Chrome
	KindID    string
	KindTitle string
	Kind      string
	Name      string
	UID       string // hidden field: only this very object is deleted
	ActionURL string
	CancelURL string

	DryRunOK     bool     // the API server accepted the dry run
	Consequences []string // what else goes with it, e.g. "12 Widget objects (widgets.example.com)"
	Problems     []EditError
	Warnings     []string
	Typed        string // what the user typed into the confirmation box (kept after a mismatch)
	// Propagation offers what happens to the objects it owns, one checked;
	// PropagationNote adds what happens whatever the choice (a CRD's objects).
	Propagation     []PropagationOption
	PropagationNote string
}

// PropagationOption is one DeleteOptions.propagationPolicy a delete page offers.
type PropagationOption struct {
	Value   string // Background, Foreground, Orphan
	Label   string
	Help    string // one line: what the garbage collector then does
	Checked bool
}
