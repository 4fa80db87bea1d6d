package handlers

import "github.com/clusterdesk/clusterdesk/handlers/page"

// The templ→echo helpers are handlers/page's, shared with the feature
// packages; the handlers of this package call them by these short names.
var (
	render           = page.Render
	renderPage       = page.RenderPage
	fragmentWanted   = page.FragmentWanted
	isHTMX           = page.IsHTMX
	redirectSeeOther = page.RedirectSeeOther
)
