package model

import "github.com/clusterdesk/clusterdesk/internal/flowschemaform/form"

// FlowSchemaFormPage is the structured FlowSchema editor (create or edit). It
// is rendered again after every add/remove row, Preview and failed Save,
// always with the values the user entered.
type FlowSchemaFormPage struct {
	Chrome Chrome
	Create bool
	Form   FlowSchemaForm

	Action  string // the form's POST URL
	YAMLURL string // the same object in the YAML editor
	Cancel  string

	PriorityLevels []string // existing PriorityLevelConfigurations, for the select

	// Errors are the API server's field causes (or a local refusal) by form
	// field key (FlowSchemaForm keys: "name", "precedence", "r0.subjects",
	// "r0.rr1.verbs", …); each is shown beside its field.
	Errors map[string][]string
	// Hints are clusterdesk's own reading of the API's rules, by the same keys.
	// They never stop a request: the API server's dry run is the judge.
	Hints map[string][]string

	Notices  []Banner    // e.g. "The API server accepts this FlowSchema"
	Problems []EditError // what the API server (or clusterdesk) refused, with causes not shown beside a field
	Warnings []Banner    // the API server's Warning headers; Dangling priority level
	Preview  *Diff       // what the server would store, after a successful Preview
	Conflict *Conflict   // set after a 409: what changed on the server
	// Focus is the key of the row just added ("r0.s1"); its first field
	// gets autofocus.
	Focus string
	// Unmodeled lists the spec fields of the live object the form does not
	// show; they are kept as they are.
	Unmodeled []string
}

// The form as typed is defined once, with its field names, in
// internal/flowschemaform/form (standard library only, so views may import
// it): the use case decodes and checks it, the page shows it.
type (
	FlowSchemaForm      = form.Form
	FormRule            = form.Rule
	FormSubject         = form.Subject
	FormResourceRule    = form.ResourceRule
	FormNonResourceRule = form.NonResourceRule
)

// PriorityLevelOther is the select's value meaning "the typed name".
const PriorityLevelOther = form.PriorityLevelOther
