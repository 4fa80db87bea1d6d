package edit

// Failure is an error of a write (or of Parse) as the editor explains it: a
// local refusal with its line, or the API server's message with its field
// causes, each placed on a line of the user's text. The presenters turn it
// into what the page shows (present.EditError).
type Failure struct {
	Title   string
	Message string
	Local   bool // clusterdesk refused before sending anything
	Line    int  // 1-based line in the text the message points at; 0 when unknown
	Causes  []Cause
}

// Cause is one field cause of an API error (details.causes).
type Cause struct {
	Field   string
	Message string
	Line    int // 1-based line of Field in the text; 0 when not found
}

// ManagerConflict is one field manager whose fields a server-side apply
// contested, with those fields.
type ManagerConflict struct {
	Manager string
	Fields  []Cause
}

// TextDiff is a unified diff of two texts, line by line.
type TextDiff struct {
	Title   string
	From    string // label of the old side
	To      string // label of the new side
	Added   int
	Removed int
	Lines   []DiffLine // empty when the two sides are equal, or too large to diff
	Note    string
	// TooLarge: the sides differ in too many lines to diff; Note says how many.
	TooLarge bool
}

// DiffKind is the kind of a diff line.
type DiffKind string

// The kinds of diff lines.
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
