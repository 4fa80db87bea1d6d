package handlers

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/layout"
	"github.com/clusterdesk/clusterdesk/views/model"
)

const csrfContextKey = "csrf"

// chrome builds the layout model shared by every page: nav with counts,
// who the console acts as, read-only state and the CSRF token for forms.
func (h *Handlers) chrome(c echo.Context, title string, active kube.KindID, crumbs ...model.Crumb) model.Chrome {
	token, _ := c.Get(csrfContextKey).(string)
	ch := model.Chrome{
		Title:       title,
		User:        h.user(c),
		ReadOnly:    h.deps.ReadOnly,
		CSRFToken:   token,
		Version:     h.deps.Cluster.ServerVersion(),
		Breadcrumbs: append([]model.Crumb{{Label: "Home", Href: "/"}}, crumbs...),
	}
	ready := false
	for _, st := range h.rights.Statuses(c) {
		declared, _ := kinds.Of(st.Kind.ID)
		item := model.NavItem{Kind: string(st.Kind.ID), Label: st.Kind.Title, Href: urls.List(st.Kind.ID), Active: st.Kind.ID == active,
			Shortcut: layout.KindShortcut(declared.Shortcut)}
		if st.State == kube.StateSynced {
			item.Count = strconv.Itoa(st.Count)
			ready = true
		}
		ch.Nav = append(ch.Nav, item)
	}
	// The auditor's activity page (handlers/activity), after the kinds.
	ch.Nav = append(ch.Nav, model.NavItem{Label: "Activity", Href: urls.Activity, Active: c.Path() == urls.Activity})
	// The durable ledger (handlers/ledger).
	ch.Nav = append(ch.Nav, model.NavItem{Label: "Ledger", Href: urls.Ledger, Active: c.Path() == urls.Ledger})
	ch.Live = h.live.Chrome(c, active) // handlers/live
	if !ready && !h.deps.Cluster.Ready() {
		ch.Banners = append(ch.Banners, clusterBanner(h.deps.Cluster.Statuses()))
	}
	if f, ok := h.flash.Take(c); ok {
		ch.Banners = append(ch.Banners, f...)
	}
	return ch
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
