package signin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// oidcStepTimeout bounds one step at the provider and the API server.
const oidcStepTimeout = 20 * time.Second

// beginOIDC sends the browser to the provider's sign-in, with a new flight
// (state, nonce, PKCE verifier) sealed in a cookie.
func (h *Handlers) beginOIDC(c echo.Context) error {
	if h.d.Gate.Mode != auth.ModeOIDC {
		return echo.NewHTTPError(http.StatusNotFound, "OpenID Connect sign-in is off: clusterdesk runs in "+string(h.d.Gate.Mode)+" mode.")
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), oidcStepTimeout)
	defer cancel()
	to, err := h.d.Gate.BeginOIDC(ctx, c.Response())
	if err != nil {
		return h.oidcFailure(c, err)
	}
	return c.Redirect(http.StatusSeeOther, to)
}

// finishOIDC is the provider's callback: it checks the answer against this
// browser's flight, verifies the ID token, asks the API server who the token
// is (the identity every write and audit record will carry; an API server
// that does not accept the token is said so here, not on the first page)
// and starts the session.
func (h *Handlers) finishOIDC(c echo.Context) error {
	if h.d.Gate.Mode != auth.ModeOIDC || h.d.TokenReview == nil {
		return echo.NewHTTPError(http.StatusNotFound, "OpenID Connect sign-in is off: clusterdesk runs in "+string(h.d.Gate.Mode)+" mode.")
	}
	o, err := h.d.Gate.FinishOIDC(c.Response(), c.Request())
	if err != nil {
		if wrongOIDCCredential(err) {
			failedSignIn(c) // the sign-in limit counts it (limit.go)
		}
		return h.oidcFailure(c, err)
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), oidcStepTimeout)
	defer cancel()
	id, err := h.d.TokenReview(ctx, o.IDToken)
	switch {
	case apierrors.IsUnauthorized(err):
		h.d.Log.Info("sign-in refused", "mode", "oidc", "reason", "the API server does not accept the ID token", "subject", o.Subject)
		return h.oidcPage(c, http.StatusForbidden, apiServerRefusedPage(o.Name, h.d.Gate.OIDC.ClientID()))
	case err != nil:
		h.d.Log.Warn("sign-in failed", "mode", "oidc", "err", err)
		return h.oidcPage(c, http.StatusServiceUnavailable, oidcPage{
			Title:   "clusterdesk could not reach the API server",
			Message: "You signed in at the provider, but clusterdesk could not ask the Kubernetes API server who you are. Try again in a moment.",
		})
	case id.User == "":
		return h.oidcPage(c, http.StatusForbidden, apiServerRefusedPage(o.Name, h.d.Gate.OIDC.ClientID()))
	}
	if err := h.d.Gate.SignInOIDC(c.Response(), c.Request(), id, o); err != nil {
		return err
	}
	h.d.Log.Info("signed in", "user", id.User, "groups", strings.Join(id.Groups, ","), "mode", "oidc",
		"claimGroups", strings.Join(o.Groups, ","), "tokenExpires", o.Expiry.Format(time.RFC3339))
	// Not a 303: the session cookie is SameSite=Strict, and a redirect that
	// continues the provider's cross-site navigation would not carry it, so
	// the first page would ask to sign in again. A page that navigates on
	// (Refresh, which CSP allows, plus a link) starts a same-site navigation.
	c.Response().Header().Set("Refresh", "0; url="+urls.Home)
	return page.Render(c, http.StatusOK, pages.Login(model.LoginPage{
		Title: "Signed in", Mode: string(auth.ModeOIDC), ContinueURL: urls.Home,
		Message: "You are signed in to clusterdesk as " + id.User + ".",
	}))
}

// oidcPage is what a failed OIDC step shows.
type oidcPage struct{ Title, Message string }

func (h *Handlers) oidcPage(c echo.Context, status int, p oidcPage) error {
	return page.Render(c, status, pages.Login(model.LoginPage{
		Title: p.Title, Message: p.Message, Mode: string(auth.ModeOIDC), Provider: h.issuerHost(),
	}))
}

// oidcFailure renders the page for a failed OIDC step; an error that is no
// OIDC step's goes to the error handler.
func (h *Handlers) oidcFailure(c echo.Context, err error) error {
	status, p, ok := oidcFailurePage(err, h.d.Gate.OIDC.Issuer())
	if !ok {
		return err
	}
	h.d.Log.Info("sign-in failed", "mode", "oidc", "err", err)
	return h.oidcPage(c, status, p)
}

// oidcFailurePage maps a failed OIDC step to its status and page. ok is
// false for an error that is not an OIDC step's.
func oidcFailurePage(err error, issuer string) (status int, p oidcPage, ok bool) {
	var oe *auth.OIDCError
	if !errors.As(err, &oe) {
		return 0, oidcPage{}, false
	}
	again := " Sign in again to start over."
	switch oe.Kind {
	case auth.OIDCIssuerUnreachable:
		return http.StatusServiceUnavailable, oidcPage{"The sign-in provider cannot be reached",
			"clusterdesk could not reach the OpenID provider at " + issuer + ". Try again in a moment; if it lasts, the provider is down or clusterdesk's issuer settings are wrong."}, true
	case auth.OIDCDenied:
		return http.StatusForbidden, oidcPage{"Sign-in was declined",
			"The sign-in provider answered that access was denied: the sign-in was declined there, so nobody is signed in." + again}, true
	case auth.OIDCProviderError:
		return http.StatusBadGateway, oidcPage{"The sign-in provider reported an error",
			"The provider answered: " + oe.Detail + "." + again}, true
	case auth.OIDCStateMissing:
		return http.StatusBadRequest, oidcPage{"This sign-in has no sign-in under way",
			"This browser has no sign-in waiting for this answer: it was used already, took longer than 10 minutes, or was started in another browser. clusterdesk refused it." + again}, true
	case auth.OIDCStateMismatch:
		return http.StatusBadRequest, oidcPage{"This sign-in answer is not this browser's",
			"The provider's answer does not belong to the sign-in this browser started (its state differs), so clusterdesk refused it: another site may have tried to sign this browser in." + again}, true
	case auth.OIDCNonceMismatch:
		return http.StatusBadRequest, oidcPage{"The ID token is not this sign-in's",
			"The ID token carries another sign-in's nonce, so clusterdesk refused it." + again}, true
	case auth.OIDCExchangeFailed:
		return http.StatusBadGateway, oidcPage{"The sign-in provider refused the sign-in",
			"The provider did not accept this sign-in's code (" + oe.Detail + ")." + again}, true
	case auth.OIDCTokenInvalid:
		msg := "clusterdesk could not verify the ID token the provider sent (signature, issuer, audience or expiry)"
		if oe.Err != nil {
			msg += ": " + boundedText(oe.Err.Error(), 300)
		}
		return http.StatusBadGateway, oidcPage{"The provider's ID token is not valid", msg + "." + again}, true
	case auth.OIDCRefreshFailed:
		return http.StatusUnauthorized, oidcPage{"Your sign-in could not be renewed", "The provider did not renew your sign-in." + again}, true
	}
	return http.StatusBadGateway, oidcPage{"Sign-in failed", oe.Detail + "." + again}, true
}

// apiServerRefusedPage: the provider signed the person in, but the API
// server does not accept the ID token, typically because the console's
// client id is not among its audiences.
func apiServerRefusedPage(name, clientID string) oidcPage {
	return oidcPage{"The Kubernetes API server does not accept this sign-in",
		"The provider signed you in as " + name + ", but the Kubernetes API server refused the ID token issued to clusterdesk's client " +
			clientID + ": the API server does not accept that client id as an audience (or does not trust this issuer). " +
			"Ask the cluster's administrators to add " + clientID + " to the API server's OIDC audiences, or run clusterdesk with a client id the API server accepts."}
}

func boundedText(s string, n int) string {
	if len(s) > n {
		return strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}

// issuerHost names the provider on the sign-in page.
func (h *Handlers) issuerHost() string {
	if h.d.Gate.OIDC == nil {
		return ""
	}
	if u, err := url.Parse(h.d.Gate.OIDC.Issuer()); err == nil {
		return u.Host
	}
	return h.d.Gate.OIDC.Issuer()
}
