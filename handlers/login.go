package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// login redeems the one-time token from the URL printed at start, sets the
// session cookie and redirects to a URL without the token, so it stays
// neither in the address bar nor in the history.
func (h *Handlers) login(c echo.Context) error {
	token := c.QueryParam("token")
	if token == "" {
		return render(c, http.StatusOK, pages.Login(model.LoginPage{
			Title:   "Sign in to clusterdesk",
			Message: "Open the one-time login URL that clusterdesk printed in its terminal.",
		}))
	}
	if !h.deps.Logins.Redeem(token) {
		return render(c, http.StatusUnauthorized, pages.Login(model.LoginPage{
			Title:   "This login link is not valid",
			Message: "Each login URL works once. Use the newest one clusterdesk printed in its terminal.",
		}))
	}
	if err := h.deps.Sessions.Start(c.Response(), h.deps.User); err != nil {
		return err
	}
	return redirectSeeOther(c, "/")
}

func (h *Handlers) logout(c echo.Context) error {
	h.deps.Sessions.End(c.Response())
	return render(c, http.StatusOK, pages.Login(model.LoginPage{
		Title:   "Signed out",
		Message: "To sign in again, open the newest one-time login URL that clusterdesk printed in its terminal.",
	}))
}
