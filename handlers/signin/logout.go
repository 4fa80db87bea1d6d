package signin

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// UserForgetter drops what the console keeps for an identity (kube.Users: its
// clients, which in token mode hold the bearer token).
type UserForgetter interface {
	Forget(id kube.Identity)
}

// logout ends the session everywhere, not only in this browser: its id is
// revoked (a saved copy of the cookie gets 401), in token mode the token is
// forgotten with the clients built on it, and the session's open event
// streams (other tabs) are told session-expired and closed.
func (h *Handlers) logout(c echo.Context) error {
	id, _ := kube.IdentityFrom(c.Request().Context())
	sess, err := h.d.Gate.SignOut(c.Response(), c.Request())
	if h.d.Users != nil {
		h.d.Users.Forget(id)
	}
	if h.d.EndStreams != nil && sess.ID != "" {
		h.d.EndStreams(sess)
	}
	if err != nil {
		// The cookie is cleared, but a copy of it may still work: say so.
		h.d.Log.Error("sign-out: revocation failed", "err", err)
		return echo.NewHTTPError(http.StatusServiceUnavailable, "clusterdesk cleared this browser's session but could not revoke it everywhere. Try signing out again.")
	}
	p := model.LoginPage{Title: "Signed out", Mode: string(h.d.Gate.Mode)}
	switch h.d.Gate.Mode {
	case auth.ModeToken:
		p.CSRFToken = h.d.PreSessionToken(c)
		p.Message = "clusterdesk has forgotten your token. To sign in again, paste a token."
	case auth.ModeProxy:
		p.Message = "clusterdesk keeps no session in proxy mode: sign out at your organisation's proxy."
	case auth.ModeOIDC:
		p.Provider = h.issuerHost()
		p.Message = "clusterdesk has forgotten your ID and refresh tokens."
	default:
		p.Message = "To sign in again, open the newest one-time login URL that clusterdesk printed in its terminal."
	}
	return page.Render(c, http.StatusOK, pages.Login(p))
}
