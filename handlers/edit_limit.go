package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	editorpages "github.com/clusterdesk/clusterdesk/handlers/editor"
	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/signin"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// editorBody bounds the bodies of the routes that carry an editor's text (and
// its starting version, compressed). The API server refuses request bodies
// over 3 MiB, but that is the compact JSON clusterdesk sends, and the YAML the
// user edits is about 2.4 times larger (cronworkflows.argoproj.io: 1.18 MB
// JSON, 2.9 MB YAML); etcd's default request limit of 1.5 MiB caps what a
// cluster stores anyway. 6 MiB lets every object a cluster can store be
// edited, while every other route keeps maxBody (1 MiB).
const editorBody = editorpages.Body

// editorBodyBytes is editorBody in bytes, for the page's script. It is also
// the most a form's starting version may expand to (edit.MaxText).
const editorBodyBytes = editorpages.BodyBytes

// maxBody bounds every request body (page.MaxBody: 1 MiB); the editor's
// routes and /login have their own limits.
const maxBody = page.MaxBody

// loginBody bounds the sign-in form's body: public, read before anyone is
// known (handlers/signin/limit.go).
const loginBody = signin.LoginBody

// editorBodyRoutes are the route templates (c.Path()) whose bodies get editorBody.
var editorBodyRoutes = map[string]bool{
	urls.CreateRoute:    true,
	urls.PreviewRoute:   true,
	urls.ApplyRoute:     true,
	urls.RebaseRoute:    true,
	urls.CRCreateRoute:  true,
	urls.CRPreviewRoute: true,
	urls.CRApplyRoute:   true,
	urls.CRRebaseRoute:  true,
	// The editor's replay of its text (readPOSTs: they write nothing).
	urls.PolicyEditorReplayRoute:            true,
	urls.BindingEditorReplayRoute:           true,
	urls.ValidatingWebhookEditorReplayRoute: true,
	urls.MutatingWebhookEditorReplayRoute:   true,
}

// editorRoute marks, in the route table, a route that carries an editor's
// text; it must be one of editorBodyRoutes (read concurrently, never written).
func editorRoute(path string) string {
	if !editorBodyRoutes[path] {
		panic("handlers: " + path + " is not in editorBodyRoutes")
	}
	return path
}

// bodyLimitFor is the body limit of a route template.
func bodyLimitFor(route string) string {
	switch {
	case editorBodyRoutes[route]:
		return editorBody
	case route == urls.Login:
		return loginBody // public: read before anyone is known (handlers/signin/limit.go)
	}
	return maxBody
}

// bodyLimit bounds every request body by its route's limit. Middleware added
// with e.Use runs after routing, so c.Path() is the route template.
func bodyLimit() echo.MiddlewareFunc {
	limits := []string{maxBody, editorBody, loginBody}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		byLimit := map[string]echo.HandlerFunc{}
		for _, l := range limits {
			byLimit[l] = middleware.BodyLimit(l)(next)
		}
		return func(c echo.Context) error {
			l := bodyLimitFor(c.Path())
			c.Set(page.BodyLimitKey, l) // for a form's answer (page.ParseForm)
			return byLimit[l](c)
		}
	}
}

// bodyTooLargeFor is the answer to a request body over limit.
func bodyTooLargeFor(limit string) error { return page.BodyTooLargeFor(limit) }

// explainBodyLimit replaces the body limit middleware's bare "Request Entity
// Too Large" with a message that says what happened and what to do. It is
// installed right before the body limit.
func explainBodyLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		var he *echo.HTTPError
		if errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge && he.Message == echo.ErrStatusRequestEntityTooLarge.Message {
			if readPOSTRoutes[c.Path()] {
				return simulatorTooLarge()
			}
			return bodyTooLargeFor(bodyLimitFor(c.Path()))
		}
		return err
	}
}
