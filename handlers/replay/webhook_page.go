package replay

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/present"
	engine "github.com/clusterdesk/clusterdesk/internal/replay"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// RegisterWebhooks adds the webhook configurations' replay pages, each
// behind its kind's access check (validating, mutating); like the
// policy's, the POST is a readPOST that changes nothing, CSRF-guarded.
func (h *Handlers) RegisterWebhooks(e *echo.Echo, validating, mutating echo.MiddlewareFunc, readPOST func(path string) string) {
	for _, k := range []struct {
		webhookKind
		access echo.MiddlewareFunc
	}{{validatingKind, validating}, {mutatingKind, mutating}} {
		e.GET(k.route, func(c echo.Context) error { return h.webhookForm(c, k.webhookKind) }, k.access, h.d.Refusal.Require)
		e.POST(readPOST(k.route), func(c echo.Context) error { return h.webhookReplay(c, k.webhookKind) }, k.access, h.d.Refusal.Require)
	}
}

// newWebhookPage is the replay page of the configuration :name of k.
func (h *Handlers) newWebhookPage(c echo.Context, k webhookKind, draft, window string) (model.ReplayPage, error) {
	name := c.Param("name")
	kind, ok := h.d.Cluster.Kind(k.id)
	if !ok {
		return model.ReplayPage{}, echo.NewHTTPError(http.StatusNotFound, "clusterdesk does not show "+k.apiKind+"s.")
	}
	p := model.ReplayPage{
		Chrome: h.d.Chrome(c, "Replay "+name+" against recorded writes", kind.ID,
			model.Crumb{Label: kind.Title, Href: urls.List(kind.ID)}, model.Crumb{Label: name, Href: urls.Object(kind.ID, name)},
			model.Crumb{Label: "Replay"}),
		PolicyName: name, Action: k.href(name), Draft: draft, Windows: windowOptions(window),
		Intro:      "Edit the draft " + k.apiKind + ", then replay: clusterdesk matches the draft and the deployed version against the writes the API server reported in the window, with the API server's own rules, selectors and matchConditions, and shows which requests the draft would newly send to a webhook or no longer send, and which would newly fail if a webhook were unreachable (its failurePolicy Fail). Nothing is applied. You see only requests of resources you may list.",
		DraftLabel: "The " + k.apiKind + ", as YAML",
	}
	if h.d.Writes == nil {
		p.Error = noWrites
	}
	return p, nil
}

// webhookForm shows the replay form, its text the deployed configuration.
func (h *Handlers) webhookForm(c echo.Context, k webhookKind) error {
	o, err := h.d.Cluster.Get(k.id, c.Param("name"))
	if err != nil {
		return echo.NewHTTPError(http.StatusNotFound, "There is no "+k.apiKind+" "+c.Param("name")+" to replay.")
	}
	text, err := deployedWebhooksText(o, k)
	if err != nil {
		return echo.NewHTTPError(http.StatusNotFound, "There is no "+k.apiKind+" "+c.Param("name")+" to replay.")
	}
	p, err := h.newWebhookPage(c, k, text, "")
	if err != nil {
		return err
	}
	return page.Render(c, http.StatusOK, pages.Replay(p))
}

// webhookReplay runs the form's draft against the deployed configuration
// over the chosen window; htmx gets the outcome alone.
func (h *Handlers) webhookReplay(c echo.Context, k webhookKind) error {
	if err := page.ParseForm(c); err != nil {
		return err
	}
	f := c.Request().Form
	p, err := h.newWebhookPage(c, k, f.Get("draft"), f.Get("window"))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if p.Error == "" {
		if p.Result, p.Error = h.runWebhooks(c, k, p); p.Error != "" && !page.IsHTMX(c) {
			// htmx swaps no error response: the fragment says what is wrong.
			status = http.StatusUnprocessableEntity
		}
	}
	return page.RenderPage(c, status, pages.Replay(p), pages.ReplayOutcome(p))
}

// runWebhooks replays the page's draft as the user, bounded by Timeout and
// the request.
func (h *Handlers) runWebhooks(c echo.Context, k webhookKind, p model.ReplayPage) (*model.ReplayResult, string) {
	draft, err := parseWebhookDraft(k, p.Draft)
	if err != nil {
		return nil, err.Error()
	}
	w := chosenWindow(p.Windows)
	ctx, cancel := context.WithTimeout(c.Request().Context(), h.d.RequestTimeout)
	defer cancel()
	dep, deployedWords := deployedWebhooks(h.d.Cluster, k, draft)
	o := engine.WebhookOptions{Writes: h.d.Writes, Window: ledger.WriteQuery{Since: time.Now().Add(-w.d)},
		Draft: draft, Deployed: dep, MayList: h.mayList(ctx)}
	var nsErr error
	o.Namespaces, nsErr = h.namespaces(ctx)
	sum, err := engine.RunWebhooks(ctx, o)
	if err != nil {
		return nil, failure(err, h.d.RequestTimeout)
	}
	r := present.WebhookReplayResult(sum, w.words, deployedWords)
	return withNamespacesNote(r, nsErr), ""
}
