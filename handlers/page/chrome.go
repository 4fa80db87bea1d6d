package page

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/layout"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// CSRFKey holds the request's CSRF token for the page's forms, set by the
// handlers' CSRF guard (handlers/csrf.go).
const CSRFKey = "csrf"

// UserKey holds the signed-in user's name, set by the handlers' sign-in
// middleware (handlers/identity.go).
const UserKey = "user"

// User names who the request acts as: the signed-in identity, else console,
// who the console acts as.
func User(c echo.Context, console string) string {
	if u, ok := c.Get(UserKey).(string); ok && u != "" {
		return u
	}
	return console
}

// Chrome builds the layout model shared by every page (its Build is the
// features' ChromeFunc): nav with counts, who the console acts as, read-only
// state and the CSRF token for forms, the live-update settings and the flash
// banners. The handlers build one per server.
type Chrome struct {
	Cluster ports.Cluster
	// Rights says which kinds the user may see (the nav's counts) and
	// whether the console is read-only.
	Rights Rights
	Flash  Flash
	// Console is who the console acts as (Deps.User).
	Console string
	// Live is the page's live-update settings (handlers/live's Chrome),
	// set once the live updates are built: they build pages too.
	Live func(c echo.Context, active kube.KindID) model.Live
}

// Build is the chrome of a page titled title; active marks the kind's entry
// in the nav.
func (ch *Chrome) Build(c echo.Context, title string, active kube.KindID, crumbs ...model.Crumb) model.Chrome {
	token, _ := c.Get(CSRFKey).(string)
	m := model.Chrome{
		Title:       title,
		User:        User(c, ch.Console),
		ReadOnly:    ch.Rights.ReadOnly,
		CSRFToken:   token,
		Version:     ch.Cluster.ServerVersion(),
		Breadcrumbs: append([]model.Crumb{{Label: "Home", Href: "/"}}, crumbs...),
	}
	ready := false
	for _, st := range ch.Rights.Statuses(c) {
		declared, _ := kinds.Of(st.Kind.ID)
		item := model.NavItem{Kind: string(st.Kind.ID), Label: st.Kind.Title, Href: urls.List(st.Kind.ID), Active: st.Kind.ID == active,
			Shortcut: layout.KindShortcut(declared.Shortcut)}
		if st.State == kube.StateSynced {
			item.Count = strconv.Itoa(st.Count)
			ready = true
		}
		m.Nav = append(m.Nav, item)
	}
	// The durable ledger (handlers/ledger), after the kinds: the one
	// history (the activity view is its observed versions, source=watch).
	// Offered only to whom it opens for (--ledger-readers granted: one more
	// cached access review), not as a link to a 403.
	if ch.Rights.LedgerRefusal(c) == "" {
		m.Nav = append(m.Nav, model.NavItem{Label: "Ledger", Href: urls.Ledger, Active: c.Path() == urls.Ledger})
	}
	m.Live = ch.Live(c, active) // handlers/live
	if !ready && !ch.Cluster.Ready() {
		m.Banners = append(m.Banners, clusterBanner(ch.Cluster.Statuses()))
	}
	if f, ok := ch.Flash.Take(c); ok {
		m.Banners = append(m.Banners, f...)
	}
	return m
}

// clusterBanner explains why nothing is shown yet: still syncing, or the API
// server cannot be reached (with its error text).
func clusterBanner(statuses []kube.KindStatus) model.Banner {
	for _, st := range statuses {
		if st.Err != nil {
			return model.Banner{Tone: model.ToneError, Title: "Cannot reach the cluster", Message: st.Err.Error(), TestID: "banner-unreachable"}
		}
	}
	return model.Banner{Tone: model.TonePending, Title: "Loading", Message: "clusterdesk is still reading the cluster; this page will fill in shortly.", TestID: "banner-syncing"}
}
