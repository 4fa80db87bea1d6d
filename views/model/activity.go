package model

// ActivityPage lists recent changes the console observed (/activity).
type ActivityPage struct {
	Chrome Chrome
	Action string // the filter form's URL
	Kinds  []Option
	Who    string
	Since  string
	Until  string
	Source string
	// Sources are the source filter's choices.
	Sources  []Option
	Problems []string // unreadable filter values, ignored
	Rows     []ActivityRow
	Total    int // rows matching the filter
	Limit    int // rows shown at most; the exports hold all matching rows
	// Hidden names kinds the user may not list: their changes are not shown.
	Hidden  []string
	About   ActivityAbout
	CSVURL  string
	JSONURL string
}

// Option is one choice of a filter (checkbox or select).
type Option struct {
	Value    string
	Label    string
	Selected bool
}

// ActivityAbout says what the view can know.
type ActivityAbout struct {
	ObservingSince string // when the console started observing, UTC
	Capacity       string // "5,000 changes"
	Dropped        string // "" or "12 changes were not recorded (queue full)"
	Disclaimer     string
}

// ActivityRow is one observed change or managedFields entry.
type ActivityRow struct {
	Time        string // "2026-11-22 02:30:15 UTC"
	TimeISO     string // datetime attribute
	KindID      string
	Kind        string // "FlowSchema"
	Name        string
	Href        string // the object's page ("" once deleted)
	HistoryHref string
	Source      string // "watch" or "managedFields"
	SourceLabel string // "Observed" / "managedFields"
	Change      string // created, updated, deleted, apply, update
	ChangeTone  Tone
	User        string // the clusterdesk user, if the write went through it
	Manager     string
	Operation   string
	Subresource string
	Fields      []string
	RV          string
	PrevRV      string
	HasDiff     bool
}

// HistoryPage is one object's observed versions with the diffs between them.
type HistoryPage struct {
	Chrome     Chrome
	KindID     string
	Kind       string
	Name       string
	ObjectHref string // "" when the object is not in the cache
	Gone       bool   // not in the cache now (deleted, or never seen)
	Entries    []HistoryEntry
	Managed    []ActivityRow // the current object's managedFields
	About      ActivityAbout
	CSVURL     string
	JSONURL    string
}

// HistoryEntry is one observed change of the object.
type HistoryEntry struct {
	Row  ActivityRow
	Diff Diff
}
