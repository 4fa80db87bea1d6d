package model

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

// FlowSchemaForm is what the form holds, as typed.
type FlowSchemaForm struct {
	Name            string
	ResourceVersion string // the version the user started from; "" when creating
	Base            string // the object the user started from, encoded (edit.EncodeBase)
	Precedence      string
	PriorityLevel   string // chosen from the select
	PriorityTyped   string // typed when PriorityLevel is PriorityLevelOther
	Distinguisher   string // "", "ByUser" or "ByNamespace"
	Rules           []FormRule
}

// PriorityLevelOther is the select's value meaning "the typed name".
const PriorityLevelOther = "-"

// FormRule is one rule: who (subjects) and what (resource and non-resource rules).
type FormRule struct {
	Subjects         []FormSubject
	ResourceRules    []FormResourceRule
	NonResourceRules []FormNonResourceRule
}

// FormSubject is one subject row.
type FormSubject struct {
	Kind      string // "User", "Group" or "ServiceAccount"
	Name      string
	Namespace string // ServiceAccount only
}

// FormResourceRule is one resource rule row. Lists are typed comma or space
// separated; the core API group is written "".
type FormResourceRule struct {
	Verbs        []string
	APIGroups    string
	Resources    string
	ClusterScope bool
	Namespaces   string
}

// FormNonResourceRule is one non-resource rule row.
type FormNonResourceRule struct {
	Verbs []string
	URLs  string
}
