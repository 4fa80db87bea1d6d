package signin

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// maxTokenLen bounds a pasted bearer token (OIDC ID tokens with many groups
// run to a few KiB).
const maxTokenLen = 16 << 10

// TokenReviewer learns who a bearer token is (a SelfSubjectReview made with it).
type TokenReviewer func(ctx context.Context, token string) (kube.Identity, error)

// loginWithToken (token mode) asks the API server who the pasted token is,
// keeps the token server-side and starts a session naming it. The token is
// never logged, echoed or put in a URL; the form is CSRF-checked like every
// POST, so another site cannot sign the browser in as someone else.
func (h *Handlers) loginWithToken(c echo.Context) error {
	if h.d.Gate.Mode != auth.ModeToken || h.d.TokenReview == nil {
		return echo.NewHTTPError(http.StatusNotFound, "Signing in with a token is off: clusterdesk runs in "+string(h.d.Gate.Mode)+" mode.")
	}
	// The body only: a token in the URL (query) would end up in histories and logs.
	token := strings.TrimSpace(c.Request().PostFormValue("token"))
	token = strings.TrimSpace(strings.TrimPrefix(token, "Bearer "))
	switch {
	case token == "":
		return h.LoginPage(c, http.StatusBadRequest, "The token was empty.")
	case len(token) > maxTokenLen || strings.ContainsAny(token, " \t\r\n"):
		return h.LoginPage(c, http.StatusBadRequest, "That does not look like a bearer token.")
	}
	id, err := h.d.TokenReview(c.Request().Context(), token)
	switch {
	case apierrors.IsUnauthorized(err):
		failedSignIn(c) // the one failure the sign-in limit counts (limit.go)
		h.d.Log.Info("sign-in refused", "reason", "token not accepted by the API server")
		return h.LoginPage(c, http.StatusUnauthorized, "The API server did not accept this token.")
	case err != nil:
		h.d.Log.Warn("sign-in failed", "err", err)
		return h.LoginPage(c, http.StatusServiceUnavailable, "clusterdesk could not ask the API server who this token is. Try again in a moment.")
	case id.User == "":
		failedSignIn(c)
		return h.LoginPage(c, http.StatusUnauthorized, "The API server did not name a user for this token.")
	}
	if err := h.d.Gate.SignIn(c.Response(), c.Request(), id); err != nil {
		if errors.Is(err, auth.ErrSessionTooLarge) {
			// The token goes sealed into the browser's cookies, which hold
			// 4 KB each (auth/cookie_parts.go).
			h.d.Log.Warn("sign-in refused", "reason", err.Error())
			return h.LoginPage(c, http.StatusRequestEntityTooLarge, "This token is too large for clusterdesk to keep in your browser's cookies.")
		}
		return err
	}
	h.d.Log.Info("signed in", "user", id.User, "groups", strings.Join(id.Groups, ","), "mode", string(h.d.Gate.Mode))
	return page.RedirectSeeOther(c, urls.Home)
}
