package handlers

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/auth"
)

// csrfBindingKey holds what the request's CSRF token is bound to, set by
// requireIdentity: the session id, or the proxy-vouched identity.
const csrfBindingKey = page.BindingKey

// csrfFailed is the one answer to every failed check: no detail helps an attacker.
var csrfFailed = echo.NewHTTPError(http.StatusForbidden,
	"This form is out of date or did not come from clusterdesk (CSRF check failed). Reload the page and try again.")

// crossOrigin is the standard library's origin check (Go 1.25+): Sec-Fetch-Site
// must say same-origin (or none: typed by the user), else Origin, if sent,
// must match Host. Maintained with the browsers' headers, so not hand-written
// here. With a public URL (publicOrigin) its origin is trusted too: a proxy
// in front may rewrite Host (to the Service's name), which an old browser's
// Origin would then not match; ownOrigin then holds Origin to it exactly.
func crossOrigin(publicOrigin string) *http.CrossOriginProtection {
	p := http.NewCrossOriginProtection()
	if publicOrigin != "" {
		if err := p.AddTrustedOrigin(publicOrigin); err != nil {
			panic("--public-url's origin " + publicOrigin + ": " + err.Error()) // parsePublicURL let a bad one through
		}
	}
	return p
}

// csrfGuard protects every non-GET route with two locks, both required:
//   - origin: the request comes from the console's own pages (crossOrigin), and
//     an Origin header, when sent, is the console's own even if Sec-Fetch-Site
//     claims same-origin;
//   - token: the form field _csrf or the X-CSRF-Token header holds the token
//     bound to the request's session (auth.SessionBinding; proxy mode:
//     auth.ProxyBinding; the public sign-in form: the pre-session cookie).
//
// Same-site attackers (another port on 127.0.0.1, a sibling subdomain) can send
// Sec-Fetch-Site: same-site and plant cookies; they cannot compute the token,
// which is an HMAC under a server key, and no cookie is compared with a field.
// Every page gets the token of its request in the context, for its forms.
func csrfGuard(sessions *auth.Sessions, publicOrigin string) echo.MiddlewareFunc {
	origins := crossOrigin(publicOrigin)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			binding, _ := c.Get(csrfBindingKey).(string)
			if binding == "" && publicRoute(c.Path()) {
				// Not signed in: the sign-in form's pre-session, if any
				// (loginPage issues one with the form).
				binding, _ = sessions.PreSessionBinding(r)
			}
			if binding != "" {
				c.Set(page.CSRFKey, sessions.CSRFToken(binding))
			}
			switch r.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				return next(c)
			}
			if origins.Check(r) != nil || !ownOrigin(r, publicOrigin) {
				return csrfFailed
			}
			// The header first (htmx sends it): reading it needs no body parse.
			token := r.Header.Get("X-CSRF-Token")
			if token == "" {
				form, err := c.FormParams()
				var he *echo.HTTPError
				if errors.As(err, &he) {
					return err // the body limit's 413, which says what happened
				}
				token = form.Get("_csrf")
			}
			if !sessions.ValidCSRF(binding, token) {
				return csrfFailed
			}
			return next(c)
		}
	}
}

// ownOrigin refuses a request whose Origin header names another origin, also
// where crossOrigin trusts Sec-Fetch-Site: same-origin. "null" (sandboxed
// frames, some redirects) is another origin too. With a public URL the
// console's origin is exactly publicOrigin (scheme, host and port), not the
// Host header, which a proxy may rewrite; without one, Host is all there is.
func ownOrigin(r *http.Request, publicOrigin string) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	if publicOrigin != "" {
		return o == publicOrigin
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host == r.Host
}

// preSessionToken issues (or reuses) the request's pre-session and returns
// its CSRF token, for the sign-in form of token mode.
func (h *Handlers) preSessionToken(c echo.Context) string {
	b, err := h.csrf.PreSession(c.Response(), c.Request())
	if err != nil {
		h.deps.Log.Error("pre-session", "err", err)
		return ""
	}
	return h.csrf.CSRFToken(b)
}

// csrfSessions is the Sessions whose key signs CSRF tokens: Deps.Sessions,
// which main sets in every mode (proxy mode has no sign-in sessions but still
// needs a key), else the gate's, else a fresh one.
func csrfSessions(deps Deps, g *auth.Gate) *auth.Sessions {
	switch {
	case deps.Sessions != nil:
		return deps.Sessions
	case g.Sessions != nil:
		return g.Sessions
	}
	return auth.NewSessions()
}
