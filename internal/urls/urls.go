// Package urls spells every address of the console once: the route patterns
// handlers register (constants ending in Route, or plain constants for
// addresses without parameters) and the builders that fill them. Handlers,
// presenters and templates all link through it. Standard library only, so
// views may import it.
package urls

import (
	"net/url"
	"strings"
)

// Addresses without parameters: each is a route and a link.
const (
	Home    = "/"
	Healthz = "/healthz"
	Readyz  = "/readyz"
	Login   = "/login"
	Logout  = "/logout"
	// OIDCLogin starts an OpenID Connect sign-in (--auth oidc); OIDCCallback
	// is where the provider sends the browser back, the path
	// --oidc-redirect-url must end in.
	OIDCLogin    = Login + "/oidc"
	OIDCCallback = OIDCLogin + "/callback"
	Gallery      = "/ui"     // the component gallery, with --dev-ui only
	Search       = "/search" // GET /search?q=<name>
	Events       = "/events" // one event stream per browser tab
	// Activity and its exports were the in-memory activity view's; they
	// redirect to the ledger's observed versions (handlers/ledger,
	// redirects.go), so bookmarks and links keep working.
	Activity     = "/activity"
	ActivityCSV  = Activity + ".csv"
	ActivityJSON = Activity + ".json"
	// Ledger is the durable ledger of changes (handlers/ledger, issue 29),
	// filtered by its query; LedgerCSV and LedgerNDJSON export the same
	// filter, one JSON object per line.
	Ledger       = "/ledger"
	LedgerCSV    = Ledger + ".csv"
	LedgerNDJSON = Ledger + ".ndjson"
	// LedgerObjectRoute is one object's history in the ledger, whether or
	// not it still exists (?uid= narrows it to one incarnation of a name).
	LedgerObjectRoute = Ledger + "/:kind/:name"
	// PolicyReplayRoute replays the recorded writes against a draft of a
	// ValidatingAdmissionPolicy and its binding (handlers/replay, issue 45).
	PolicyReplayRoute = "/validatingadmissionpolicies/:name" + replaySuffix
)

// Sub-paths of an object's page. A console kind's object (/:kind/:name) and a
// custom resource (/crds/:name/instances/:ns/:obj) share them.
const (
	historySuffix = "/history"
	yamlSuffix    = "/yaml"
	editSuffix    = "/edit"
	previewSuffix = "/preview"
	applySuffix   = "/apply"
	rebaseSuffix  = "/rebase"
	deleteSuffix  = "/delete"
	newSuffix     = "/new"
	createSuffix  = "/create"
	// cleanupSuffix is a list's bulk deletion: "-" is no object's name
	// (names are DNS subdomains), so it shadows none.
	cleanupSuffix = "/-/cleanup"
	confirmSuffix = "/confirm"
	replaySuffix  = "/replay"
)

// Routes of every kind: :kind is a kind's ID, :name an object's name.
const (
	ListRoute    = "/:kind"
	ObjectRoute  = "/:kind/:name"
	HistoryRoute = ObjectRoute + historySuffix
	YAMLRoute    = ObjectRoute + yamlSuffix
	NewRoute     = ListRoute + newSuffix
	CreateRoute  = ListRoute + createSuffix
	EditRoute    = ObjectRoute + editSuffix
	PreviewRoute = ObjectRoute + previewSuffix
	ApplyRoute   = ObjectRoute + applySuffix
	RebaseRoute  = ObjectRoute + rebaseSuffix
	DeleteRoute  = ObjectRoute + deleteSuffix
	// CleanupRoute previews a bulk deletion (GET: by filter; POST: ticked
	// rows); CleanupConfirmRoute deletes what the preview showed.
	CleanupRoute        = ListRoute + cleanupSuffix
	CleanupConfirmRoute = CleanupRoute + confirmSuffix
)

// Segment escapes one path segment. Names are at most 253 characters, and a
// custom resource's name may hold any character but "/" and "%"
// (apimachinery's IsValidPathSegmentName, staging/src/k8s.io/apimachinery/pkg/api/validation/path/name.go).
// It escapes like Go's own path encoding (url.URL.EscapedPath), not like
// url.PathEscape: PathEscape also escapes ";" and ",", which makes Go keep the
// raw path, and echo then routes on it and hands the handler "%3B" instead of ";".
func Segment(s string) string {
	return strings.ReplaceAll((&url.URL{Path: s}).EscapedPath(), "/", "%2F")
}

// WithQuery appends v to path as its query, if v holds anything.
func WithQuery(path string, v url.Values) string {
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// List is the list page of kind (a kind ID, e.g. kube.CSRs or "csrs").
func List[K ~string](kind K) string { return "/" + Segment(string(kind)) }

// Lint filters of the lists (present's list_lint.go): the CRDs with
// stored-version drift, the objects with danger lints.
const (
	LintDrift  = "drift"
	LintDanger = "danger"
)

// ListWithLint is the list of kind showing only the objects its lint=
// filter keeps (LintDrift, LintDanger).
func ListWithLint[K ~string](kind K, lint string) string {
	return WithQuery(List(kind), url.Values{"lint": {lint}})
}

// Object is the page of the object name of kind.
func Object[K ~string](kind K, name string) string { return List(kind) + "/" + Segment(name) }

// History was an object's observed versions (the in-memory activity view);
// it redirects to the one history, LedgerObject (handlers/ledger).
func History[K ~string](kind K, name string) string { return Object(kind, name) + historySuffix }

// LedgerObject is the ledger's history of the object name of kind; uid, when
// not "", narrows it to one object of a name that was deleted and created again.
func LedgerObject[K ~string](kind K, name, uid string) string {
	p := Ledger + List(kind) + "/" + Segment(name)
	if uid != "" {
		p += "?" + url.Values{"uid": {uid}}.Encode()
	}
	return p
}

// PolicyReplay is the replay of a draft of the ValidatingAdmissionPolicy name
// (PolicyReplayRoute).
func PolicyReplay(name string) string {
	return Object("validatingadmissionpolicies", name) + replaySuffix
}

// BindingReplay is PolicyReplay whose draft starts from the binding of
// the policy named binding.
func BindingReplay(policy, binding string) string {
	return WithQuery(PolicyReplay(policy), url.Values{"binding": {binding}})
}

// LedgerUser is the ledger page of what user did.
func LedgerUser(user string) string { return WithQuery(Ledger, url.Values{"user": {user}}) }

// LedgerSigner is the ledger page of the decisions and writes on a signer's requests.
func LedgerSigner(signer string) string { return WithQuery(Ledger, url.Values{"signer": {signer}}) }

// YAML is an object's YAML, loaded on demand by its detail page.
func YAML[K ~string](kind K, name string) string { return Object(kind, name) + yamlSuffix }

// New is the editor that creates an object of kind.
func New[K ~string](kind K) string { return List(kind) + newSuffix }

// Create is where New's form posts.
func Create[K ~string](kind K) string { return List(kind) + createSuffix }

// Edit is the editor of an object of kind.
func Edit[K ~string](kind K, name string) string { return EditorOf(Object(kind, name)).Edit }

// Cleanup is the bulk deletion preview of kind.
func Cleanup[K ~string](kind K) string { return List(kind) + cleanupSuffix }

// CleanupConfirm is where a cleanup preview's confirmation posts.
func CleanupConfirm[K ~string](kind K) string { return Cleanup(kind) + confirmSuffix }

// Delete is the delete page of an object of kind.
func Delete[K ~string](kind K, name string) string { return EditorOf(Object(kind, name)).Delete }

// Editor is the editor's addresses for one object.
type Editor struct{ Edit, Preview, Apply, Rebase, Delete string }

// EditorOf is the editor of the object whose page is page (Object or CRInstance).
func EditorOf(page string) Editor {
	return Editor{Edit: page + editSuffix, Preview: page + previewSuffix, Apply: page + applySuffix,
		Rebase: page + rebaseSuffix, Delete: page + deleteSuffix}
}
