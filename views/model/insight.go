package model

// Insight is a rich section of a detail page, for what a Section's plain
// strings cannot say: lint findings, badges and code inside table cells,
// links, and nested cards (one per webhook). Every part is optional.
type Insight struct {
	Title    string
	TestID   string
	Intro    string    // one plain sentence under the title
	Findings []Finding // shown as banners at the top of the panel
	Fields   []RichField
	Table    *RichTable
	Cards    []Insight // nested panels, each collapsible
	Open     bool      // for a card: expanded by default
	Anchor   string    // for a card: its element id, for in-page links
	// Follow, when set, is fetched once the page is shown to replace the
	// panel (its load was not read yet; see ListPage.LoadFollow).
	Follow string
}

// Finding is one lint result: a badge in tables, a banner in cards.
type Finding struct {
	Code    string // stable id, e.g. "fail-kube-system"; data-testid "finding-<code>"
	Tone    Tone   // ToneError, ToneWarning, or ToneNeutral for notes
	Title   string
	Message string // one line: what is wrong and what it causes
}

// RichField is a label and a rich value; Hint explains the field in one line.
type RichField struct {
	Label string
	Value Rich
	Hint  string
}

// RichTable is a table of rich cells.
type RichTable struct {
	Columns []string
	Rows    []RichRow
	Empty   string // shown instead of an empty body
}

// RichRow is one table row; TestID becomes its data-testid.
type RichRow struct {
	TestID string
	Cells  []Rich
}

// Rich is a display value: text and/or lines, code snippets, a link, badges.
type Rich struct {
	Text   string
	Lines  []string  // each on its own line (e.g. one webhook rule per line)
	Code   []Snippet // code shown as code (e.g. CEL matchConditions)
	Href   string    // makes Text a link
	Mono   bool
	Badges []Badge
	Hint   string // tooltip
}

// Snippet is a named piece of code.
type Snippet struct {
	Label string
	Code  string
}

// SchemaPage explores one version's openAPIV3Schema, focused on one field.
type SchemaPage struct {
	Chrome   Chrome
	CRD      string // the CRD's name
	Kind     string // "Widget"
	Version  string
	Versions []SchemaVersion // every version with a schema, for switching
	Path     string          // the focused field; "" for the whole object
	Trail    []Crumb         // from the root to the focused field
	Root     SchemaNode      // the focused field; its Children are the tree
	Fields   int             // fields below the focused one
	Shown    int             // fields rendered on this page
	Note     string          // why some levels open in their own view
}

// SchemaVersion links to another version's schema.
type SchemaVersion struct {
	Name    string
	Href    string
	Current bool
}

// SchemaNode is one field of a schema tree.
type SchemaNode struct {
	Name            string // property name, "[]" for array items, "{}" for map values
	Path            string
	Type            string
	Format          string
	Required        bool
	Nullable        bool
	DescriptionHTML string // rendered by internal/docs (safe Markdown): the one HTML string views insert raw
	Enum            []string
	Default         string
	Pattern         string
	Limits          []string
	Extensions      []string
	Junctors        []string
	Rules           []SchemaRule
	Children        []SchemaNode
	Open            bool   // expanded by default
	FocusHref       string // the page focused on this field ("" for leaves)
	Hidden          int    // fields below it not rendered here (then FocusHref shows them)
}

// SchemaRule is a CEL validation rule.
type SchemaRule struct {
	Rule    string
	Message string // the message, or "message expression: …"
	Detail  string // reason, fieldPath, optionalOldSelf
}

// InterceptPage is the "which webhooks would intercept this request?" form
// and, once submitted, its answer.
type InterceptPage struct {
	Chrome     Chrome
	Form       InterceptForm
	Operations []string          // choices for Form.Operation
	Errors     map[string]string // form field name → what is wrong with it
	Notes      []string          // what was read from the cluster (namespace labels, versions)
	Result     *Insight          // nil until a valid request was submitted
	// Policies are the ValidatingAdmissionPolicy bindings and what each
	// would do with the request; nil until a valid request was submitted.
	Policies *Insight
}

// InterceptForm holds the form's values as typed.
type InterceptForm struct {
	Operation       string
	Group           string
	Version         string
	Resource        string
	Subresource     string
	Namespace       string
	NamespaceLabels string // "a=b,c=d": used when the namespace does not exist
	ObjectLabels    string
	OldObjectLabels string
	// What the webhooks' matchConditions (CEL) see: the object and old
	// object as YAML, and who makes the request.
	Object    string
	OldObject string
	User      string
	Groups    string // comma-separated
}
