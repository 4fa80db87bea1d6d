package model

// FlowSchemaListPage is the FlowSchema overview: every FlowSchema, by default
// in the order the apiserver evaluates them.
type FlowSchemaListPage struct {
	// List carries the chrome, the filter, the columns (in display order),
	// the sort and the counts; its Rows are unused (see Rows).
	List         ListPage
	Rows         []FlowSchemaRow // in the chosen sort order
	Notes        []Banner        // e.g. a mandatory FlowSchema is missing and the apiserver uses its built-in copy
	ClassifyHref string
	NewFormHref  string // the structured create form; "" hides its button (read-only, or may not create)
	LoadShown    bool   // the Load column is there (the user may read /metrics)
}

// FlowSchemaRow is one FlowSchema in the overview.
type FlowSchemaRow struct {
	ID         string // DOM id, "row-flowschemas-<name>"
	Position   string // 1-based place in evaluation order
	Name       string
	Href       string
	Tick       string  // the cleanup tick box's value, "<uid>/<name>" (List.TickAction set)
	NameBadges []Badge // Mandatory / Auto-update / Dangling / Skipped
	Precedence string
	// PriorityLevel links to its page when it exists (PriorityLevelHref "").
	PriorityLevel       string
	PriorityLevelHref   string
	PriorityLevelBadges []Badge // Missing
	Distinguisher       string
	Summary             string // one line: subjects → rules, per rule
	Skipped             bool   // the apiserver does not evaluate it (dangling)
	Load                string // "3/s dispatched, 0/s rejected", or that none matched
	LoadBadges          []Badge
}

// ClassifyPage is the request classifier: a GET form and, once submitted, the result.
type ClassifyPage struct {
	Chrome   Chrome
	Form     ClassifyForm
	Errors   map[string]string // field name → message, shown beside the field
	Examples []ClassifyExample
	Result   *ClassifyResult // nil until a valid request is submitted
	Notes    []Banner        // e.g. priority levels could not be read
	Action   string          // the form's URL
	ListHref string          // back to the FlowSchema overview
}

// ClassifyForm is what the classifier form holds, as typed.
type ClassifyForm struct {
	Submitted      bool
	User           string
	Groups         string // comma or space separated
	ServiceAccount string // "namespace/name"
	ExactGroups    bool   // do not add system:authenticated
	NonResource    bool   // a non-resource request (Path) instead of a resource request
	Verb           string
	APIGroup       string
	Resource       string // "pods" or "pods/status"
	Namespace      string // "" for cluster scope
	Path           string
}

// ClassifyExample is a ready-made request the form can be filled with.
type ClassifyExample struct {
	Label string
	Href  string
}

// ClassifyResult is where the apiserver would put the request, and why.
type ClassifyResult struct {
	Identity string // "user bob in groups devs, system:authenticated"
	Request  string // "list pods in namespace default", "get /healthz"

	FlowSchema     string
	FlowSchemaHref string // "" for the apiserver's built-in copy
	Position       string // "3 of 25"
	Precedence     string
	MatchedRule    string // "rule 1: subject group system:masters and resourceRule match"
	Badges         []Badge

	PriorityLevel      string
	PriorityLevelHref  string
	PriorityLevelType  string // "Exempt", "Limited (queuing, 64 queues)", …
	PriorityLevelBadge []Badge
	// Load is the priority level's live load in one sentence ("" when not shown).
	Load       string
	LoadBadges []Badge // "rejecting 35/s" when it is
	LoadFollow string  // see ListPage.LoadFollow: replaces the load sentence once read

	Distinguisher      string // "ByUser", "ByNamespace" or "none"
	DistinguisherValue string // the flow's distinguisher, or "" (shown as "(empty)")
	DistinguisherNote  string

	Trace []ClassifyStep // the FlowSchemas evaluated before the match, then the match
}

// ClassifyStep is one FlowSchema in the trace.
type ClassifyStep struct {
	Position   string
	FlowSchema string
	Href       string
	Precedence string
	Outcome    Badge
	Reasons    []string // one per rule, "rule 1: …"
	Matched    bool
}
