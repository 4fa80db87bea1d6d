package ledger

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/ledgerview"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// viewable is what the viewer may see of the ledger: the kinds they may list
// (ids in the registry's order, and by id), and the titles of the others.
type viewable struct {
	ids    []string
	byID   map[string]kube.Kind
	hidden []string
}

// viewableKinds asks the access check once per kind: the ledger holds
// deleted objects the cache never will, so it must never answer for a kind
// the viewer may not list.
func (h *Handlers) viewableKinds(c echo.Context) viewable {
	v := viewable{byID: map[string]kube.Kind{}}
	for _, st := range h.d.Cluster.Statuses() {
		if h.d.MayList(c, st.Kind) {
			v.ids = append(v.ids, string(st.Kind.ID))
			v.byID[string(st.Kind.ID)] = st.Kind
		} else {
			v.hidden = append(v.hidden, st.Kind.Title)
		}
	}
	return v
}

// singular is a kind id's singular title, "" when the viewer may not list it.
func (v viewable) singular(id string) string { return v.byID[id].Singular }

// parseFilter reads the URL's filter, answering 400 with the reason.
func parseFilter(c echo.Context) (ledgerview.Filter, error) {
	f, err := ledgerview.ParseFilter(c.QueryParams(), time.Now())
	if err != nil {
		return f, echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	return f, nil
}

// status is the ledger's header, or why the database cannot give it: the
// page then says the database is unreachable, with the error, and shows no
// rows, still 200 with the rest of the page.
func (h *Handlers) status(ctx context.Context) (model.LedgerAbout, string) {
	if err := h.d.Store.Ping(ctx); err != nil {
		return model.LedgerAbout{}, err.Error()
	}
	st, err := h.stats.get(ctx, h.d.Store, time.Now())
	if err != nil {
		return model.LedgerAbout{}, err.Error()
	}
	return present.LedgerAbout(st), ""
}

// query runs one page's query. A malformed cursor is the sender's mistake
// (400); any other error is the database's, said on the page.
func (h *Handlers) query(ctx context.Context, q ledger.Query) (ledger.Page, string, error) {
	pg, err := h.d.Store.Query(ctx, q)
	switch {
	case errors.Is(err, ledger.ErrBadCursor):
		return pg, "", echo.NewHTTPError(http.StatusBadRequest, "The page cursor (after) is not one this ledger wrote; start from the first page.")
	case err != nil:
		return pg, err.Error(), nil
	}
	return pg, "", nil
}

// page serves the ledger page: every change the viewer may see, newest
// first, filtered, one keyset page at a time.
func (h *Handlers) page(c echo.Context) error {
	f, err := parseFilter(c)
	if err != nil {
		return err
	}
	p := model.LedgerPage{Action: urls.Ledger, User: f.User, Signer: f.Signer, Manager: f.Manager, Since: f.SinceText, Until: f.UntilText}
	p.Heading, p.Intro = present.LedgerHeading(f)
	p.Chrome = h.d.Chrome(c, p.Heading, "", model.Crumb{Label: "Ledger", Href: urls.Ledger}, model.Crumb{Label: p.Heading})
	if p.Heading == "Ledger" {
		p.Chrome.Breadcrumbs = p.Chrome.Breadcrumbs[:len(p.Chrome.Breadcrumbs)-1]
		p.Chrome.Breadcrumbs[len(p.Chrome.Breadcrumbs)-1].Href = ""
	}
	if h.d.Store == nil {
		p.Off = OffMessage
		return page.Render(c, http.StatusOK, pages.Ledger(p))
	}
	v := h.viewableKinds(c)
	p.Hidden = v.hidden
	for _, id := range v.ids {
		p.Kinds = append(p.Kinds, model.Option{Value: id, Label: v.byID[id].Title, Selected: slices.Contains(f.Kinds, id)})
	}
	p.Actions, p.Results, p.Sources = present.LedgerOptions(f)
	p.Fold = present.LedgerFold(f)
	exports := f.Values()
	p.CSVURL, p.NDJSONURL = urls.WithQuery(urls.LedgerCSV, exports), urls.WithQuery(urls.LedgerNDJSON, exports)

	ctx, cancel := context.WithTimeout(c.Request().Context(), h.d.Timeout)
	defer cancel()
	if p.About, p.Unreachable = h.status(ctx); p.Unreachable != "" {
		return page.Render(c, http.StatusOK, pages.Ledger(p))
	}
	q := f.Query(v.ids, 0)
	if len(q.Kinds) > 0 {
		pg, unreachable, err := h.query(ctx, q)
		if err != nil {
			return err
		}
		if p.Unreachable = unreachable; unreachable == "" {
			for _, e := range pg.Entries {
				p.Rows = append(p.Rows, present.LedgerRow(e, v.singular(e.Kind)))
			}
			p.NextHref = pageHref(urls.Ledger, exports, pg.Next)
		}
	}
	if f.After != "" {
		p.FirstHref = urls.WithQuery(urls.Ledger, exports)
	}
	return page.Render(c, http.StatusOK, pages.Ledger(p))
}

// pageHref is the page after cursor next of the view at path with the
// filter's values, "" when there is none.
func pageHref(path string, filter url.Values, next string) string {
	if next == "" {
		return ""
	}
	v := url.Values{}
	for k, vals := range filter {
		v[k] = vals
	}
	v.Set("after", next)
	return urls.WithQuery(path, v)
}
