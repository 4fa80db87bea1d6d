package cleanup

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/cleanup"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// maxTicked bounds the ticked rows one cleanup takes (a queue page holds fewer).
const maxTicked = 1000

// maxPreviewAge is how old a preview may be when it is confirmed: its age
// filter counts back from the preview's time, which the form carries.
const maxPreviewAge = 24 * time.Hour

// csrCleanupStates are the CSR states a cleanup may filter on.
var csrCleanupStates = []string{"", cleanup.Decided, csrqueue.Pending, csrqueue.Approved, csrqueue.Issued, csrqueue.Denied, csrqueue.Failed}

// cleanupCase is the cleanup use case for this request's user: deletions as
// them, each audited under their name.
func (h *Handlers) cleanupCase(c echo.Context) *cleanup.Service {
	return &cleanup.Service{API: h.d.Editor, Audit: h.d.Audit.For(c.Request().Context())}
}

// previewCleanup (GET /:kind/-/cleanup?selector=&older=&state=&signer=) previews
// deleting everything the filter matches; previewTickedCleanup (POST, from a
// list's ticked rows) the ticked rows; confirmCleanup deletes.
func (h *Handlers) previewCleanup(c echo.Context) error {
	return h.cleanupPreviewOf(c, h.builtinCleanup)
}

func (h *Handlers) previewTickedCleanup(c echo.Context) error {
	return h.cleanupPreviewOf(c, h.builtinCleanup)
}

// errNothingTicked answers a "Delete selected…" posted with no row ticked:
// without it, the empty selection would be no selection at all, and the
// preview would offer every object of the kind.
var errNothingTicked = echo.NewHTTPError(http.StatusBadRequest,
	"No row was ticked: tick the rows to delete first, or use Clean up… to preview everything the list's filter selects.")

func (h *Handlers) confirmCleanup(c echo.Context) error {
	return h.confirmCleanupOf(c, h.builtinCleanup)
}

// The same for a CRD's custom resources (/crds/:name/instances/-/cleanup).
func (h *Handlers) previewCRCleanup(c echo.Context) error {
	return h.cleanupPreviewOf(c, h.crCleanup)
}

func (h *Handlers) previewTickedCRCleanup(c echo.Context) error {
	return h.cleanupPreviewOf(c, h.crCleanup)
}

func (h *Handlers) confirmCRCleanup(c echo.Context) error { return h.confirmCleanupOf(c, h.crCleanup) }

type cleanupResolver func(echo.Context) (cleanupTarget, error)

// resolveCleanup resolves the target, refusing when no Editor deletes as the user.
func (h *Handlers) resolveCleanup(c echo.Context, resolve cleanupResolver) (cleanupTarget, error) {
	if h.d.Editor == nil {
		return cleanupTarget{}, echo.NewHTTPError(http.StatusServiceUnavailable, "clusterdesk cannot write as you here: no cleanup.")
	}
	return resolve(c)
}

func (h *Handlers) cleanupPreviewOf(c echo.Context, resolve cleanupResolver) error {
	t, err := h.resolveCleanup(c, resolve)
	if err != nil {
		return err
	}
	v := c.QueryParams()
	if c.Request().Method == http.MethodPost {
		if v, err = c.FormParams(); err != nil {
			return page.BodyTooLarge()
		}
	}
	f, err := t.parseFilter(v)
	if err != nil {
		return err
	}
	if c.Request().Method == http.MethodPost && f.Picked == nil {
		return errNothingTicked
	}
	return h.showCleanup(c, t, f, v, time.Now(), http.StatusOK, nil, "")
}

// parseFilter reads a cleanup's filter: selector (kubectl -l syntax), older
// (7d, 12h), state and signer (CSRs only), and names (ticked rows, each a
// box's cleanup.Ref.Value). Bad input is a 400 in words.
func (t cleanupTarget) parseFilter(v url.Values) (cleanup.Filter, error) {
	f, err := cleanup.Filter{}.WithSelector(v.Get("selector"))
	if err != nil {
		return f, echo.NewHTTPError(http.StatusBadRequest, "The label selector: "+err.Error()+". Write it as kubectl -l takes it, e.g. app=web,tier!=cache or 'env in (dev,test)'.")
	}
	if f.OlderThan, err = cleanup.ParseAge(v.Get("older")); err != nil {
		return f, echo.NewHTTPError(http.StatusBadRequest, "The age filter: "+err.Error()+".")
	}
	f.State, f.Signer = strings.TrimSpace(v.Get("state")), strings.TrimSpace(v.Get("signer"))
	if !t.csr && (f.State != "" || f.Signer != "") {
		return f, echo.NewHTTPError(http.StatusBadRequest, "The state and signer filters apply to CertificateSigningRequests only.")
	}
	if !slices.Contains(csrCleanupStates, f.State) {
		return f, echo.NewHTTPError(http.StatusBadRequest, "The state filter "+strconv.Quote(f.State)+" is none of "+strings.Join(csrCleanupStates[1:], ", ")+".")
	}
	names := append(v["names"], v["names[]"]...)
	if len(names) > maxTicked {
		return f, echo.NewHTTPError(http.StatusBadRequest, "Tick at most "+strconv.Itoa(maxTicked)+" rows, or clean up by filter.")
	}
	for _, n := range names {
		r, err := cleanup.ParseRef(n)
		if err != nil {
			return f, echo.NewHTTPError(http.StatusBadRequest, err.Error())
		}
		if r.Namespace != "" && !t.target.Namespaced {
			return f, echo.NewHTTPError(http.StatusBadRequest, "The ticked row "+strconv.Quote(n)+" names a namespace, but "+t.title+" have none.")
		}
		f.Picked = append(f.Picked, r)
	}
	if v.Has("picked") && f.Picked == nil { // a confirmation of ticked rows that lost them
		f.Picked = []cleanup.Ref{}
	}
	return f, nil
}

// filterFields are f as the confirmation form's hidden fields.
func filterFields(f cleanup.Filter) []model.FormField {
	var out []model.FormField
	add := func(name, value string) {
		if value != "" {
			out = append(out, model.FormField{Name: name, Value: value})
		}
	}
	add("selector", f.Selector)
	add("older", cleanup.FormatAge(f.OlderThan))
	add("state", f.State)
	add("signer", f.Signer)
	if f.Picked != nil {
		add("picked", "1")
		for _, r := range f.Picked {
			add("names", r.Value())
		}
	}
	return out
}

// filterQuery is f as the preview's query, for its page links.
func filterQuery(f cleanup.Filter) url.Values {
	q := url.Values{}
	for _, fld := range filterFields(f) {
		q.Add(fld.Name, fld.Value)
	}
	return q
}

// showCleanup renders the preview of f as of at: the exact count, one page of
// names with the API server's dry run of their deletion as the user, and the
// confirmation form bound to the set's fingerprint.
func (h *Handlers) showCleanup(c echo.Context, t cleanupTarget, f cleanup.Filter, query url.Values, at time.Time, status int, problems []model.Banner, typed string) error {
	ctx := c.Request().Context()
	cands, err := t.candidates(ctx, f.Selector)
	if err != nil {
		return err
	}
	sel := cleanup.Select(cands, f, at)
	p := model.CleanupPage{
		Chrome:    h.d.Chrome(c, "Clean up "+t.title, t.nav, append(slices.Clone(t.crumbs), model.Crumb{Label: "Clean up"})...),
		KindTitle: t.title, What: present.CleanupWhat(f), Count: len(sel.Items),
		Problems: problems, ConfirmURL: t.confirm, CancelURL: t.list, Typed: typed,
		NeedTyped: len(sel.Items) > model.CleanupTypedOver,
	}
	for _, r := range sel.Gone {
		p.Gone = append(p.Gone, r.Name)
	}
	lo, hi := 0, len(sel.Items)
	if f.Picked == nil { // ticked rows are few and posted: one page shows them all
		lo, hi, p.Pager = present.CleanupWindow(len(sel.Items), page.ParsePage(query), t.preview, filterQuery(f))
	}
	shown := sel.Items[lo:hi]
	outcomes := h.cleanupCase(c).DryRun(ctx, t.target, shown)
	p.Items = present.CleanupItems(shown, outcomes, t.href)
	for _, o := range outcomes {
		if o.Result == cleanup.Forbidden {
			p.Forbidden++
		}
	}
	if len(shown) > 0 {
		p.DryRunNote = "The API server dry-ran the deletion of the " + strconv.Itoa(len(shown)) + " objects listed here, as you (dryRun=All): each shows its answer."
		if len(shown) < len(sel.Items) {
			p.DryRunNote += " The other pages are dry-run when you open them."
		}
	}
	if p.Forbidden > 0 {
		p.Problems = append(p.Problems, model.Banner{Tone: model.ToneError, Title: strconv.Itoa(p.Forbidden) + " of the listed objects may not be deleted by you",
			Message: "The API server's dry run refused them (forbidden). Confirming deletes the others and reports these as forbidden.", TestID: "cleanup-forbidden"})
	}
	p.Hidden = append(filterFields(f),
		model.FormField{Name: "at", Value: strconv.FormatInt(at.Unix(), 10)},
		model.FormField{Name: "fingerprint", Value: cleanup.Fingerprint(t.scope, sel.Items)},
		model.FormField{Name: "count", Value: strconv.Itoa(len(sel.Items))})
	return page.Render(c, status, pages.Cleanup(p))
}

// confirmCleanupOf deletes what the preview showed, and only that: it finds
// the set again (as of the preview's time), refuses when its fingerprint
// differs (an object created, deleted or replaced under the same name since),
// asks for the typed count above CleanupTypedOver, then deletes as the user
// with each object's UID as a precondition and shows a result per object.
func (h *Handlers) confirmCleanupOf(c echo.Context, resolve cleanupResolver) error {
	t, err := h.resolveCleanup(c, resolve)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return page.BodyTooLarge()
	}
	f, err := t.parseFilter(form)
	if err != nil {
		return err
	}
	at, err := previewTime(form.Get("at"))
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	cands, err := t.candidates(ctx, f.Selector)
	if err != nil {
		return err
	}
	sel := cleanup.Select(cands, f, at)
	typed := strings.TrimSpace(form.Get("confirm_count"))
	if cleanup.Fingerprint(t.scope, sel.Items) != form.Get("fingerprint") {
		return h.showCleanup(c, t, f, nil, at, http.StatusConflict, []model.Banner{{Tone: model.ToneWarning, Title: "Nothing was deleted: the set changed since your preview",
			Message: "Objects were created, deleted or replaced under the same name since you looked (" + form.Get("count") + " then, " + strconv.Itoa(len(sel.Items)) + " now). Review this preview and confirm again.",
			TestID:  "cleanup-changed"}}, "")
	}
	if len(sel.Items) > model.CleanupTypedOver && typed != strconv.Itoa(len(sel.Items)) {
		return h.showCleanup(c, t, f, nil, at, http.StatusUnprocessableEntity, []model.Banner{{Tone: model.ToneError, Title: "Count not confirmed",
			Message: "Type " + strconv.Itoa(len(sel.Items)) + ", the number of objects, to delete them; you typed " + strconv.Quote(typed) + ". Nothing was deleted.",
			TestID:  "cleanup-count-unconfirmed"}}, typed)
	}
	if len(sel.Items) == 0 {
		return echo.NewHTTPError(http.StatusBadRequest, "Nothing matches: there is nothing to delete.")
	}
	// Each object is deleted with its UID as a precondition, whatever the
	// filter: the fingerprint compares the preview with the cache (or a
	// LIST), which may lag the API server, so only the UIDs make sure that
	// nothing created or replaced since is deleted unseen.
	return h.finishCleanup(c, t, f, h.startCleanup(c, t, sel.Items))
}

// previewTime reads the preview's time from the form: the age filter counts
// back from it, so that the confirmation finds the same set.
func previewTime(s string) (time.Time, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	at := time.Unix(n, 0)
	if err != nil || at.After(time.Now().Add(time.Minute)) || time.Since(at) > maxPreviewAge {
		return time.Time{}, echo.NewHTTPError(http.StatusBadRequest, "This confirmation does not come from a recent preview: open the cleanup preview again.")
	}
	return at, nil
}

// cleanupStatus is 200 when anything was deleted, else 403 when every
// deletion was forbidden, else 409.
func cleanupStatus(outcomes []cleanup.Outcome) int {
	n := cleanup.Counts(outcomes)
	switch {
	case n[cleanup.Deleted] > 0:
		return http.StatusOK
	case n[cleanup.Forbidden] == len(outcomes):
		return http.StatusForbidden
	}
	return http.StatusConflict
}
