package model

// ReplayPage replays the cluster's recorded writes against a draft of a
// ValidatingAdmissionPolicy and its bindings (handlers/replay, issue 45).
type ReplayPage struct {
	Chrome     Chrome
	PolicyName string
	// Intro and DraftLabel word the page for what its draft is; "" words
	// it for a policy and its bindings (a webhook configuration's replay
	// sets them).
	Intro, DraftLabel string
	Action            string // the form's POST target
	// Draft is the form's text: the policy and its bindings, each after a "---".
	Draft   string
	Windows []Option // the windows offered, the chosen one Selected
	// Error is why the draft cannot be replayed, shown beside the form; no
	// replay ran.
	Error  string
	Result *ReplayResult
	// Job is the replay running in the background, while it runs
	// (replay_job.go); Result once it is done.
	Job *ReplayJob
	// Basis says what the YAML editor's text was replayed with (the
	// deployed bindings of a policy, the deployed policy and its other
	// bindings of a binding); "" on the replay page, whose draft holds them.
	Basis string
}

// ReplayResult is what the draft would have changed over the window.
type ReplayResult struct {
	Window   string // "the last 7 days"
	Deployed string // which deployed version the draft is compared with
	// Counts are the headline numbers, in order (evaluated, newly denied…).
	Counts  []ReplayCount
	Skipped []string // "3 refused before admission"
	Notes   []string // what the replay could not know
	Groups  []ReplayGroup
	// LeftOut says how many changed requests are counted but not listed.
	LeftOut string
	Elapsed string
}

// ReplayCount is one headline number.
type ReplayCount struct{ Label, Value, TestID string }

// ReplayGroup is the changed requests of one user, namespace, resource and
// operation.
type ReplayGroup struct {
	User, Namespace, Resource, Operation string
	Summary                              string // "2 newly denied, 1 newly warned"
	Requests                             []ReplayRequest
}

// ReplayRequest is one request whose verdict the draft changes.
type ReplayRequest struct {
	Time, Name, What, Draft, Deployed, Message, AuditID string
	// Href is the request's ledger entry (its object's history, which
	// lists the entry); "" when the ledger keeps no entries of the kind.
	Href string
}
