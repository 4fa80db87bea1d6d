package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/static"
)

// publicRoute reports whether route, the route template echo matched for a
// request (c.Path()), is served without a session.
//
// It is decided on the route, not on a path: echo routes on the raw path
// (echo.GetPath: URL.RawPath when set, else URL.Path; labstack/echo v4
// echo.go), while URL.Path is its decoding. The two disagree on a path that
// percent-encodes: /%73tatic/x/apply decodes to /static/x/apply, which
// looks public, but echo routes it to /:kind/:name/apply, the editor's. The
// sign-in check, the CSRF guard's sign-in form binding and the body limits
// (edit_limit.go, by c.Path()) now all read the one route echo runs.
// Middleware added with e.Use runs after routing, so c.Path() is set.
func publicRoute(route string) bool {
	switch route {
	case urls.Healthz, urls.Readyz, urls.Login, urls.OIDCLogin, urls.OIDCCallback:
		return true
	}
	// The static group's routes: its files and its not-found routes.
	return strings.HasPrefix(route, static.Prefix)
}

// ambiguousPath reports a request path that percent-encodes a character that
// needs no encoding: a letter, a digit, "-", ".", "_" or "~" (RFC 3986
// section 2.3: such URIs are equivalent to the decoded ones and "should be
// normalized by decoding"), or "%2F", a "/" that is not a separator.
// Browsers and the console's own links (urls.Segment, which escapes as Go's
// URL.EscapedPath does, and only a "/" inside a name as %2F — no Kubernetes
// name holds one) never send the first; the second is only used to make the
// path echo routes and the path a reader decodes disagree. Both are refused
// before anything else looks at the path.
func ambiguousPath(r *http.Request) bool {
	raw := r.URL.RawPath
	for i := 0; i+2 < len(raw); i++ {
		if raw[i] != '%' {
			continue
		}
		c, ok := unhex(raw[i+1], raw[i+2])
		if !ok {
			continue
		}
		if c == '/' || c == '-' || c == '.' || c == '_' || c == '~' ||
			('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') {
			return true
		}
	}
	return false
}

func unhex(a, b byte) (byte, bool) {
	hi, ok1 := hexDigit(a)
	lo, ok2 := hexDigit(b)
	return hi<<4 | lo, ok1 && ok2
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// ambiguousPathRefused is the answer to an ambiguousPath request.
var ambiguousPathRefused = echo.NewHTTPError(http.StatusBadRequest,
	"This address percent-encodes characters that need no encoding (or a \"/\"), so it could be read as two different addresses. Use the address as clusterdesk links it.")
