package page

import (
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// BindingKey holds what the request's session (or proxy identity) binds its
// CSRF token and its flash banners to, set by the handlers' sign-in
// middleware (handlers/identity.go).
const BindingKey = "csrf-binding"

// Flash queues banners (a write's result and the API server's warnings) for
// the page the browser is redirected to, bound to the request's session (or
// proxy identity), so they show in that session only. The handlers build one
// over the sessions and give it to the features that write.
type Flash struct{ Sessions *auth.Sessions }

// Set queues banners for the next page of c's session.
func (f Flash) Set(c echo.Context, banners []model.Banner) error {
	binding, _ := c.Get(BindingKey).(string)
	return f.Sessions.SetFlash(c.Response(), binding, banners)
}

// Take reads (and clears) the banners queued for c's session: the page
// chrome shows them.
func (f Flash) Take(c echo.Context) ([]model.Banner, bool) {
	var banners []model.Banner
	binding, _ := c.Get(BindingKey).(string)
	ok := f.Sessions.TakeFlash(c.Response(), c.Request(), binding, &banners)
	return banners, ok && len(banners) > 0
}

// AndRedirect shows a write's result and warnings on the page it goes to.
func (f Flash) AndRedirect(c echo.Context, title, msg string, warnings []string, to string) error {
	banners := []model.Banner{{Tone: model.ToneOK, Title: title, Message: msg, TestID: "toast-result"}}
	for _, w := range warnings {
		banners = append(banners, model.Banner{Tone: model.ToneWarning, Title: "Warning from the API server", Message: w, TestID: "toast-warning"})
	}
	if err := f.Set(c, banners); err != nil {
		return errors.Join(errors.New("the change was written, but its confirmation could not be shown"), err)
	}
	return RedirectSeeOther(c, to)
}
