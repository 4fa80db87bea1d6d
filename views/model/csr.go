package model

// CSRQueuePage is the CertificateSigningRequest approval queue: pending requests
// first (oldest first), then the recently decided, with state tabs, filters,
// the checks' findings per row, and a bulk approve/deny form.
type CSRQueuePage struct {
	Chrome  Chrome
	Title   string
	Action  string // the queue URL forms and links target, "/csrs"
	Filter  CSRFilter
	Tabs    []CSRTab
	Signers []CSROption // signer filter choices; the first is "any"
	Ages    []CSROption // age filter choices; the first is "any"
	// Policies and Verdicts are the policy filter's choices (the first is
	// "any"); none when the user sees no policies.
	Policies []CSROption
	Verdicts []CSROption
	// Whys are the "why pending" filter's choices (the first is "any"):
	// internal/csrwhy's codes.
	Whys []CSROption
	// PolicyApproveHref previews "approve everything this policy approves"
	// (the policy filter's policy); "" when not offered.
	PolicyApproveHref string
	Sort              string
	Desc              bool
	Columns           []Column
	Rows              []CSRRow
	Total             int    // CSRs in the cache
	NewHref           string // the "New" button's create page; "" hides it
	// CleanupHref previews deleting what the queue's filters match, and
	// CleanupTickedURL is where "Delete selected" posts the ticked rows; ""
	// hides both (read-only mode).
	CleanupHref, CleanupTickedURL string
	Matched                       int // CSRs that pass the filters and the tab
	Shown                         int // rows rendered: this page's share of Matched
	Pager                         Pager
	View                          string // the URL of this view (filters, tab, sort, page): live updates fetch it again
	Empty                         string
	// Forbidden: the user may not list CSRs; no table, a banner says why.
	Forbidden bool
	// Decide offers the bulk form: the user may decide at least one pending CSR.
	Decide bool
	// Bulk is the outcome of the bulk decision this page answers, if any.
	Bulk *CSRBulkResult
	// Message refills the bulk form's message after a partial failure.
	Message string
	// Return is the query string of this view, so a bulk decision comes back to it.
	Return string
	// Group is the storm this view is filtered to (group=), if it is one.
	Group *CSRGroup
	// LiveView is this view's query as its live updates name it, and LiveURL
	// the event stream of this view (as of this render): a tab whose table
	// shows another view than its stream connects again (web/js/live.js).
	// "" when live updates are off or the view cannot be followed.
	LiveView, LiveURL string
	// LiveDictID and LiveDict (base64) are the dictionary the view's live
	// updates are deflated against (handlers/page.DeflateCSRView).
	LiveDictID, LiveDict string
	// DecideSigners are the signers the user may decide for, among the
	// queue's: a row a live update adds keeps its selection box (a storm's
	// row its actions) only for those.
	DecideSigners []string
	// MayDelete: a decided row a live update adds keeps its selection box
	// (on a decided state's tab the boxes tick requests to delete).
	MayDelete bool
}

// CSRFilter is what the queue is narrowed by.
type CSRFilter struct {
	Query     string // free text over every visible column
	State     string // "" (all), pending, approved, issued, denied, failed
	Signer    string // exact signer name, "" for any
	Requester string // part of spec.username or of one of spec.groups
	Age       string // "", lt1h, lt24h, gt1h, gt24h, gt7d
	Group     string // a storm's or duplicate set's ID: only its pending requests
	Selector  string // label selector, kubectl -l syntax, as typed
	Policy    string // a CSR approval policy's name: the pending requests it matches
	Verdict   string // "", approve, deny, error: the policies' verdict kept
	Why       string // a csrwhy code: the pending requests pending for that reason
	// SelectorError says why Selector is not one (the page answers 400, no rows).
	SelectorError string
}

// CSRTab is one state tab with the number of CSRs in that state (under the
// other filters).
type CSRTab struct {
	Key    string
	Label  string
	Count  int
	Href   string
	Active bool
	Tone   Tone
}

// CSROption is one choice of a <select>.
type CSROption struct {
	Value    string
	Label    string
	Selected bool
}

// CSRRow is one CSR in the queue. Row.Cells holds every column after the first
// (the first, the request, is rendered from Name, Href, Subject and the
// selection fields); Findings fill the checks column.
type CSRRow struct {
	Row
	Subject    string     // decoded subject and the first SANs in one line, or why the request does not decode
	MoreSANs   MoreValues // the other SANs, behind "N more", fetched when opened
	SubjectBad bool       // Subject is a decode error
	Findings   []CSRFinding
	State      string // the state key, as in CSRFilter.State
	UID        string // metadata.uid of the CSR shown: a decision is refused for any other object
	Selectable bool   // pending, and the user may decide for its signer
	Selected   bool   // pre-selected (it failed in the last bulk decision)
	// Group, when set, makes the row stand for a storm: pending requests with
	// one signer, subject and requester (a client retrying). Name is then the
	// storm's ID, Href its filtered view, Findings the checks of one request.
	Group *CSRGroup
	// Verdicts are the CSR approval policies' verdicts on a pending request
	// (shadow mode): one chip per policy that matches or cannot run.
	Verdicts []CSRVerdict
}

// CSRVerdict is one policy's verdict on a pending request, as a chip.
type CSRVerdict struct {
	Policy  string
	Verdict string // "approve", "deny" or "error" (the queue's verdict= values)
	Label   string // "approve: node-client"
	Reason  string // the reason and message the condition would carry, or the error
	Tone    Tone
	Href    string // the queue filtered to this policy's verdict
}

// CSRGroup is a storm of pending requests: one signer, subject and requester
// (a client retrying), or one signer and requester asking for many subjects
// (ByRequester: automation gone wrong).
type CSRGroup struct {
	ID        string // csrqueue.Storm ID, in URLs
	Count     int
	Title     string // "5000 requests from system:node:w"
	Signer    string
	Subject   string // "" for a requester storm
	Requester string
	// ByRequester: the requests name Subjects different subjects.
	ByRequester bool
	Subjects    int
	NewestName  string
	OldestName  string
	ChecksOf    string // the request whose findings the row shows
	Href        string // the queue filtered to the storm
	// ApproveHref and DenyHref preview "approve the newest, deny the rest" and
	// "deny all"; "" when the user may not decide for the signer. A requester
	// storm has no ApproveHref: its newest is one certificate among many
	// different ones (csrqueue.ErrApproveNewestOfMany).
	ApproveHref string
	DenyHref    string
}

// CSRFinding is one result of the signer-aware checks, worded for a person.
type CSRFinding struct {
	Check   string // stable id, e.g. "privileged-group"
	Tone    Tone   // ToneError for danger, ToneWarning, ToneNeutral for information
	Label   string // "Danger", "Warning", "Note"
	Message string
	// Href links what the finding is about (the duplicates: the queue
	// filtered to them), with LinkText; "" for none.
	Href     string
	LinkText string
}

// CSRBulkResult reports a bulk approve or deny per CSR: what succeeded, what
// failed and why.
type CSRBulkResult struct {
	Verb      string // "Approved" or "Denied"
	Succeeded int
	Failed    int
	Items     []CSRBulkItem
}

// CSRBulkItem is the outcome for one CSR of a bulk decision.
type CSRBulkItem struct {
	Name     string
	Href     string
	OK       bool
	Replaced bool     // refused: the name now holds another request than the one selected
	Message  string   // what happened, or the API server's refusal
	Warnings []string // the API server's Warning headers
}

// CSRDetailPage is one CSR: the generic detail page plus the checks' findings
// beside the request and the issued certificate's download link.
type CSRDetailPage struct {
	DetailPage
	Findings []CSRFinding
	// ChecksNote qualifies the findings, e.g. when the request does not decode.
	ChecksNote string
	// CertificateHref downloads status.certificate as PEM; "" until issued.
	CertificateHref string
	// NodeCheck loads the comparison of a kubelet-serving request's SANs with
	// its Node after the page (a GET as the user); zero: none to load.
	NodeCheck CSRNodeCheck
	// Why says in one line why a pending request is pending (issue 47):
	// WhyCode is internal/csrwhy's code, Why its message; "" when decided.
	WhyCode, WhyShort, Why string
	// Issue offers uploading the certificate an external CA issued, for an
	// approved request of a custom signer; nil where none can be written.
	Issue *CSRIssueForm
}

// CSRIssueForm uploads a certificate (or chain) for an approved CSR of a
// custom signer, bound to the object and version shown.
type CSRIssueForm struct {
	Action          string // where the form posts
	Signer          string
	UID             string
	ResourceVersion string
	MaxChainBytes   int
	MaxBundleBytes  int
	// Chain and Bundle are the texts pasted, kept when the upload was refused.
	Chain, Bundle string
	// Error says why the last upload was refused (ErrorTitle: by whom).
	ErrorTitle string
	Error      string
	Causes     []string // the API server's field causes, if it refused
}

// CSRNodeCheck is where a kubelet-serving CSR's Node comparison loads from.
type CSRNodeCheck struct {
	Href string // the fragment (htmx) or, followed as a link, the page with it
	Node string
}

// CSRNodeResult is the Node comparison's answer: its findings, none when the
// SANs are all the Node's addresses.
type CSRNodeResult struct {
	Node     string
	Findings []CSRFinding
}

// SelectValue is the value of the row's selection box: "<uid>/<name>", so the
// bulk form says which object was ticked, not only which name (a name can be
// deleted and created again; a UID never comes back). Neither part can hold a
// "/": names are DNS subdomains, UIDs are UUIDs.
func (r CSRRow) SelectValue() string { return CSRSelectValue(r.UID, r.Name) }

// CSRSelectValue is the selection value of the CSR name with metadata.uid uid.
func CSRSelectValue(uid, name string) string { return uid + "/" + name }

// CSRGroupPreview is what a group action on a storm will do, request by
// request, before it is done: the confirm form carries exactly these
// requests with their UIDs.
type CSRGroupPreview struct {
	Chrome Chrome
	Group  CSRGroup
	Action string // "approve-newest" or "deny-all"
	Title  string // the action in words
	Items  []CSRGroupDecision
	// Approve and Deny count the decisions in Items.
	Approve, Deny int
	// Left is how many of the storm's requests stay pending after this step
	// (a step decides a bounded number); Note says what to do about them.
	Left      int
	Note      string
	DecideURL string
	Back      string // the storm's filtered queue
}

// CSRGroupDecision is one request of a group action and what it will get.
type CSRGroupDecision struct {
	Name    string
	UID     string
	Href    string
	Age     string
	Approve bool
	// Subject is the request's, shown when the group's requests differ in it
	// (a requester storm); "" otherwise.
	Subject string
}

// SelectValue is the decision's "<uid>/<name>", as the bulk form's boxes carry.
func (d CSRGroupDecision) SelectValue() string { return CSRSelectValue(d.UID, d.Name) }

// CSRPolicyApprovePage previews "approve everything policy X approves": the
// pending requests the policy approves now, each carried by the confirm form
// with its UID and resourceVersion, so that a request that changed before
// the click is skipped, never approved.
type CSRPolicyApprovePage struct {
	Chrome   Chrome
	Title    string
	Policy   string
	Reason   string // the condition's message the approvals will carry
	Action   string // the confirm form's URL
	BackHref string // the queue filtered to the policy
	Rows     []CSRPolicyApproveRow
	More     int    // requests beyond this step (approved in a next step)
	Empty    string // why nothing is listed
}

// CSRPolicyApproveRow is one request of the preview.
type CSRPolicyApproveRow struct {
	Name, Href, Subject, Requester string
	Value                          string // "<resourceVersion>/<uid>/<name>", the confirm form's field r
}
