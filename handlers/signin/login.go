package signin

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
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
	if h.d.Gate.Mode != auth.ModeLocal {
		return h.LoginPage(c, http.StatusOK, "")
	}
	token := c.QueryParam("token")
	if token == "" || h.d.Logins == nil {
		return h.LoginPage(c, http.StatusOK, "")
	}
	if !h.d.Logins.Redeem(token) {
		failedSignIn(c) // a wrong one-time token: the sign-in limit counts it (limit.go)
		return page.Render(c, http.StatusUnauthorized, pages.Login(model.LoginPage{
			Title:   "This login link is not valid",
			Message: "Each login URL works once. Use the newest one clusterdesk printed in its terminal.",
			Mode:    string(auth.ModeLocal),
		}))
	}
	if err := h.d.Sessions.Start(c.Response(), h.d.User); err != nil {
		return err
	}
	return page.RedirectSeeOther(c, urls.Home)
}

// LoginPage renders the sign-in page of the mode, with msg first.
func (h *Handlers) LoginPage(c echo.Context, status int, msg string) error {
	p := model.LoginPage{Title: "Sign in to clusterdesk", Mode: string(h.d.Gate.Mode)}
	switch h.d.Gate.Mode {
	case auth.ModeToken:
		// The form is posted before there is a session: its token is bound
		// to a pre-session (login CSRF, handlers/csrf.go).
		p.CSRFToken = h.d.PreSessionToken(c)
		p.Message = strings.TrimSpace(msg + " Paste a Kubernetes bearer token to sign in.")
	case auth.ModeProxy:
		p.Message = strings.TrimSpace(msg + " Sign in through your organisation's proxy.")
	case auth.ModeOIDC:
		p.Provider = h.issuerHost()
		p.Message = strings.TrimSpace(msg + " Sign in with your organisation's OpenID provider.")
	default:
		p.Message = strings.TrimSpace(msg + " Open the one-time login URL that clusterdesk printed in its terminal.")
	}
	return page.Render(c, status, pages.Login(p))
}
