package model

// LedgerPage is the durable ledger of changes (/ledger): newest first, paged
// by a cursor, filtered by a plain GET form.
type LedgerPage struct {
	Chrome  Chrome
	Heading string // "Ledger", "What alice did", "Decisions for signer X"
	Intro   string
	Action  string // the filter form's URL
	About   LedgerAbout
	// Off, when set, replaces the page: the console runs without a ledger
	// (the text says how to turn it on).
	Off string
	// Unreachable is the database's error when it does not answer; the page
	// says so and shows no rows.
	Unreachable string
	Kinds       []Option
	Actions     []Option
	Results     []Option
	Sources     []Option
	User        string
	Signer      string
	Manager     string // field managers of observed versions (exact)
	Since       string
	Until       string
	Hidden      []string // kinds the viewer may not list: not shown
	Rows        []LedgerRow
	// NextHref is the next (older) page, "" on the last; FirstHref the
	// first, "" on the first.
	NextHref  string
	FirstHref string
	CSVURL    string
	NDJSONURL string
	// Fold says whether the control plane's housekeeping is left out, with
	// the one click that changes it; nil when the view folds nothing (a
	// user's or a signer's page).
	Fold *LedgerFold
}

// LedgerFold is the line above the list that says the control plane's
// housekeeping is hidden (or shown), and the link that turns it.
type LedgerFold struct {
	Hidden bool
	Text   string
	Link   string
	Href   string
}

// LedgerAbout is the ledger's header: where it is kept, how much it holds,
// and how long.
type LedgerAbout struct {
	Backend   string // "SQLite (embedded)", "PostgreSQL"
	Entries   string // "1,204 entries"
	Oldest    string // the oldest entry's time, or "none yet"
	Retention string // "kept 400 days", "kept forever"
}

// LedgerRow is one entry of the ledger.
type LedgerRow struct {
	Time         string
	TimeISO      string
	User         string
	UserHref     string // the user's page of the ledger
	Impersonator string // "via <impersonator>" when the console impersonated
	Action       string
	ActionTone   Tone
	DryRun       bool
	KindID       string
	Kind         string // the kind's singular title, or the resource
	Name         string
	HistoryHref  string // the object's history in the ledger
	Signer       string
	SignerHref   string
	Result       string // "ok 201", "denied 403"
	ResultTone   Tone
	Reason       string
	Source       string // "API server", "console" or "observed"
	// Manager is the field managers an observed version credits (no user:
	// a field manager is not a person).
	Manager string
}

// LedgerManager is one managedFields entry of the object now.
type LedgerManager struct {
	Manager     string
	Operation   string
	Subresource string
	Time        string
	Fields      []string
}

// LedgerHistoryPage is one object's history in the ledger, oldest first,
// whether or not the object still exists.
type LedgerHistoryPage struct {
	Chrome      Chrome
	KindID      string
	Kind        string
	Name        string
	UID         string // the incarnation shown, "" for every one of the name
	ObjectHref  string // the object's page while it exists, else ""
	Gone        bool
	About       LedgerAbout
	Off         string
	Unreachable string
	// UIDs lists the incarnations of the name the page found, when more
	// than one: each links to its own history (no Href: the one shown).
	UIDs  []Crumb
	Steps []LedgerStep
	// Managers is the object's managedFields now (while the cache holds
	// it): who last wrote which fields, also before any entry.
	Managers  []LedgerManager
	CSR       *LedgerCSR
	NextHref  string
	FirstHref string
	CSVURL    string
	NDJSONURL string
}

// LedgerStep is one entry of an object's history.
type LedgerStep struct {
	Row LedgerRow
	// Diff is the step's diff: the console's, or between the versions the
	// watch observed.
	Diff *Diff
}

// LedgerCSR is a CSR's story from the ledger: what it asked for, who
// decided, and the certificate issued.
type LedgerCSR struct {
	Request    []Field // subject, SANs, key, usages, signer, requester
	RequestErr string
	Decisions  []LedgerRow
	Issued     []LedgerCertificate
}

// LedgerCertificate is an issued certificate read from an issue step.
type LedgerCertificate struct {
	Time      string
	Serial    string
	Subject   string
	Issuer    string
	NotBefore string
	NotAfter  string
	Err       string
}

// Option is one choice of a filter (checkbox or select).
type Option struct {
	Value    string
	Label    string
	Selected bool
}
