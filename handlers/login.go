package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// login shows the sign-in page of the mode. In local mode it redeems the
// one-time token from the URL printed at start, sets the session cookie and
// redirects to a URL without the token, so it stays neither in the address
// bar nor in the history.
func (h *Handlers) login(c echo.Context) error {
	if h.gate.Mode != auth.ModeLocal {
		return h.loginPage(c, http.StatusOK, "")
	}
	token := c.QueryParam("token")
	if token == "" || h.deps.Logins == nil {
		return h.loginPage(c, http.StatusOK, "")
	}
	if !h.deps.Logins.Redeem(token) {
		failedSignIn(c) // a wrong one-time token: the sign-in limit counts it (signin_limit.go)
		return render(c, http.StatusUnauthorized, pages.Login(model.LoginPage{
			Title:   "This login link is not valid",
			Message: "Each login URL works once. Use the newest one clusterdesk printed in its terminal.",
			Mode:    string(auth.ModeLocal),
		}))
	}
	if err := h.deps.Sessions.Start(c.Response(), h.deps.User); err != nil {
		return err
	}
	return redirectSeeOther(c, urls.Home)
}
