package ledger

import (
	"context"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/ledgerview"
	"github.com/clusterdesk/clusterdesk/internal/managedfields"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// historyLimit is the steps one page of an object's history shows; most
// objects have a handful, a FlowSchema edited daily for a year pages on.
const historyLimit = 200

// csrStoryLimit bounds the steps a CSR's story reads (create, decisions,
// issue): a request retried a hundred times is already a finding.
const csrStoryLimit = 100

// maxObjectName is the longest name of the console's kinds (a DNS subdomain).
const maxObjectName = 253

// history serves one object's history (/ledger/:kind/:name, ?uid= one
// incarnation, ?after= the next page, ?format=csv|ndjson its export), oldest
// first, whether or not the object still exists. ofKind has checked that
// the viewer may list the kind.
func (h *Handlers) history(c echo.Context) error {
	k, err := h.d.Kind(c)
	if err != nil {
		return err
	}
	name := c.Param("name")
	if len(name) > maxObjectName || name == "" {
		return echo.NewHTTPError(http.StatusBadRequest, "An object's name is 1 to 253 characters.")
	}
	uid, after, err := ledgerview.ParseHistory(c.QueryParams())
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	// An object's history never folds the control plane's housekeeping
	// (FoldHousekeeping stays false), unlike the ledger's list: it answers
	// "what happened to this object", where a status write is part of the
	// story (a CRD's Established condition), and there is no other object's
	// change for it to bury. Folding here would also make the object's
	// index walk the housekeeping it skips: the partial index serves the
	// list only.
	//
	// Each version is told once (OnePerVersion): the write that left it,
	// with the watch's diff when the write has none, or the watch's entry
	// when no write of it reached the ledger (issue 44: one history).
	q := ledger.Query{Kind: string(k.ID), Name: name, UID: uid, Kinds: []string{string(k.ID)}, Oldest: true, OnePerVersion: true}
	switch format := c.QueryParam("format"); format {
	case formatCSV, formatNDJSON:
		return h.export(c, format, "clusterdesk-ledger-"+string(k.ID)+"-"+name, q)
	case "":
	default:
		return echo.NewHTTPError(http.StatusBadRequest, "format is csv or ndjson.")
	}

	p := model.LedgerHistoryPage{KindID: string(k.ID), Kind: k.Singular, Name: name, UID: uid}
	if m, err := h.d.Cluster.Meta(k.ID, name); err == nil {
		p.ObjectHref = urls.Object(k.ID, name)
		p.Managers = present.LedgerManagers(managedfields.Of(m.GetManagedFields()))
	} else {
		p.Gone = true
	}
	p.Chrome = h.historyChrome(c, k, name, p.ObjectHref)
	if h.d.Store == nil {
		p.Off = OffMessage
		return page.Render(c, http.StatusOK, pages.LedgerHistory(p))
	}
	base := urls.LedgerObject(k.ID, name, "")
	keep := url.Values{}
	if uid != "" {
		keep.Set("uid", uid)
	}
	p.CSVURL, p.NDJSONURL = withFormat(base, keep, formatCSV), withFormat(base, keep, formatNDJSON)

	ctx, cancel := context.WithTimeout(c.Request().Context(), h.d.Timeout)
	defer cancel()
	if p.About, p.Unreachable = h.status(ctx); p.Unreachable != "" {
		return page.Render(c, http.StatusOK, pages.LedgerHistory(p))
	}
	q.After, q.Limit = after, historyLimit
	pg, unreachable, err := h.query(ctx, q)
	if err != nil {
		return err
	}
	if p.Unreachable = unreachable; unreachable != "" {
		return page.Render(c, http.StatusOK, pages.LedgerHistory(p))
	}
	for _, e := range pg.Entries {
		p.Steps = append(p.Steps, present.LedgerStep(e, k.Singular))
	}
	if uid == "" {
		p.UIDs = incarnations(k.ID, name, pg.Entries)
	}
	p.NextHref = pageHref(base, keep, pg.Next)
	if after != "" {
		p.FirstHref = urls.WithQuery(base, keep)
	}
	if k.ID == kube.CSRs {
		story := q
		story.After, story.Limit, story.Actions = "", csrStoryLimit, ledgerview.CSRStoryActions
		if spg, unreachable, _ := h.query(ctx, story); unreachable == "" {
			p.CSR = present.LedgerCSR(ledgerview.StoryOfCSR(spg.Entries))
		}
	}
	return page.Render(c, http.StatusOK, pages.LedgerHistory(p))
}

// historyChrome is the history page's chrome: the kind's list, the object
// while it exists, the history.
func (h *Handlers) historyChrome(c echo.Context, k kube.Kind, name, objectHref string) model.Chrome {
	crumbs := []model.Crumb{{Label: k.Title, Href: urls.List(k.ID)}, {Label: name, Href: objectHref}, {Label: "Ledger history"}}
	return h.d.Chrome(c, "History of "+name, k.ID, crumbs...)
}

// incarnations lists the uids the page's entries name when there is more
// than one: a name deleted and created again is two objects, each with its
// own history.
func incarnations(kind kube.KindID, name string, entries []ledger.Entry) []model.Crumb {
	var out []model.Crumb
	seen := map[string]bool{}
	for _, e := range entries {
		if e.UID == "" || seen[e.UID] {
			continue
		}
		seen[e.UID] = true
		out = append(out, model.Crumb{Label: e.UID, Href: urls.LedgerObject(kind, name, e.UID)})
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// withFormat is an export link of the history at base.
func withFormat(base string, keep url.Values, format string) string {
	v := url.Values{"format": {format}}
	for k, vals := range keep {
		v[k] = vals
	}
	return urls.WithQuery(base, v)
}
