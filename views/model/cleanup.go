package model

// CleanupPage is a bulk deletion: its preview (exactly what will go, with the
// API server's dry run of the shown page) and, after the confirmation, the
// result per object.
type CleanupPage struct {
	Chrome    Chrome
	KindTitle string // "CertificateSigningRequests"
	What      string // the selection in words: "decided, older than 7d, labels team=a"
	Count     int    // exactly how many objects match, over every page
	Items     []CleanupItem
	Pager     Pager
	// DryRunNote says what the shown results are (the dry run of this page).
	DryRunNote string
	// Forbidden counts the shown objects the dry run refused.
	Forbidden int
	Gone      []string // ticked rows no longer there with the UID seen
	Problems  []Banner // a bad selector, an untyped count, a changed set
	// The confirmation form: where it posts, its hidden fields (the filter
	// or the ticked rows, the fingerprint of the set, the preview's time).
	ConfirmURL string
	CancelURL  string
	Hidden     []FormField
	NeedTyped  bool // more than CleanupTypedOver objects: the count must be typed
	Typed      string
	Result     *CleanupResult // set after the deletion
}

// CleanupTypedOver is the count above which a cleanup must be confirmed by
// typing the count.
const CleanupTypedOver = 20

// FormField is one hidden form field.
type FormField struct{ Name, Value string }

// CleanupItem is one object of a cleanup, with its dry run's or deletion's result.
type CleanupItem struct {
	Namespace, Name string
	Href            string
	Result          string // "would be deleted", "deleted", "forbidden", …; "" not checked
	Tone            Tone
	Message         string // the API server's message when it refused
}

// CleanupResult is what a confirmed cleanup did.
type CleanupResult struct {
	Counts []CleanupCount
	Items  []CleanupItem // failures first, then the deleted; at most a page
	More   int           // outcomes not listed
}

// CleanupCount is how many objects ended with one result.
type CleanupCount struct {
	Result string
	N      int
	Tone   Tone
}
