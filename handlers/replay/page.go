package replay

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/present"
	engine "github.com/clusterdesk/clusterdesk/internal/replay"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// windows are the replay's windows, the default first: the recorded writes
// are kept 7 days by default.
var windows = []struct {
	value, label, words string
	d                   time.Duration
}{
	{"7d", "7 days", "the last 7 days", 7 * 24 * time.Hour},
	{"24h", "24 hours", "the last 24 hours", 24 * time.Hour},
	{"1h", "1 hour", "the last hour", time.Hour},
}

// newPage is the page of the policy :name with the form's text and window.
func (h *Handlers) newPage(c echo.Context, draft, window string) (model.ReplayPage, error) {
	name := c.Param("name")
	kind, ok := h.d.Cluster.Kind(kube.AdmissionPolicies)
	if !ok {
		return model.ReplayPage{}, echo.NewHTTPError(http.StatusNotFound, "clusterdesk does not show ValidatingAdmissionPolicies.")
	}
	p := model.ReplayPage{
		Chrome: h.d.Chrome(c, "Replay "+name+" against recorded writes", kind.ID,
			model.Crumb{Label: kind.Title, Href: urls.List(kind.ID)}, model.Crumb{Label: name, Href: urls.Object(kind.ID, name)},
			model.Crumb{Label: "Replay"}),
		PolicyName: name, Action: urls.PolicyReplay(name), Draft: draft,
	}
	p.Windows = windowOptions(window)
	if h.d.Writes == nil {
		p.Error = "This console records no writes (it runs without a ledger, or the API server's audit webhook is not configured), so there is nothing to replay."
	}
	return p, nil
}

// form shows the replay form, its text the deployed policy and binding.
func (h *Handlers) form(c echo.Context) error {
	o, err := h.d.Cluster.Get(kube.AdmissionPolicies, c.Param("name"))
	pol, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	if err != nil || !ok {
		return echo.NewHTTPError(http.StatusNotFound, "There is no ValidatingAdmissionPolicy "+c.Param("name")+" to replay.")
	}
	text, err := deployedText(h.d.Cluster, pol, c.QueryParam("binding"))
	if err != nil {
		return err
	}
	p, err := h.newPage(c, text, "")
	if err != nil {
		return err
	}
	return page.Render(c, http.StatusOK, pages.Replay(p))
}

// replay runs the draft of the form against the deployed version over the
// chosen window and shows the result, or why the draft cannot run. htmx
// gets the result alone (the form stays as it is).
func (h *Handlers) replay(c echo.Context) error {
	if err := page.ParseForm(c); err != nil {
		return err
	}
	f := c.Request().Form
	p, err := h.newPage(c, f.Get("draft"), f.Get("window"))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if p.Error == "" {
		if p.Result, p.Error = h.run(c, p); p.Error != "" {
			status = http.StatusUnprocessableEntity
		}
	}
	if status != http.StatusOK && page.IsHTMX(c) {
		// htmx swaps no error response (web/js/behaviours.js lets in only
		// the lists' 400s): the fragment says what is wrong.
		status = http.StatusOK
	}
	return page.RenderPage(c, status, pages.Replay(p), pages.ReplayOutcome(p))
}

// run replays the page's draft; a draft that cannot run is the error's words.
// It is bounded by Timeout and ends with the request (the browser went away).
func (h *Handlers) run(c echo.Context, p model.ReplayPage) (*model.ReplayResult, string) {
	draft, err := parseDraft(p.Draft)
	if err != nil {
		return nil, err.Error()
	}
	w := chosenWindow(p.Windows)
	ctx, cancel := context.WithTimeout(c.Request().Context(), h.d.Timeout)
	defer cancel()
	dep, deployedWords := deployed(h.d.Cluster, draft)
	o := engine.Options{
		Writes: h.d.Writes, Window: ledger.WriteQuery{Since: time.Now().Add(-w.d)},
		Draft: draft, Deployed: dep, MayList: h.mayList(ctx),
	}
	if h.d.Lookup != nil {
		o.Params = h.d.Lookup
	}
	var nsErr error
	o.Namespaces, nsErr = h.namespaces(ctx)
	sum, err := engine.Run(ctx, o)
	if err != nil {
		return nil, h.failure(err)
	}
	return withNamespacesNote(present.ReplayResult(sum, w.words, deployedWords), nsErr), ""
}

// mayList answers the engine as the signed-in user: a user sees replayed
// requests only of the resources their RBAC lets them list. An error
// answers no: the request stays hidden rather than shown by mistake.
func (h *Handlers) mayList(ctx context.Context) func(group, resource string) bool {
	return func(group, resource string) bool {
		ok, err := h.d.Access.Can(ctx, "list", group, resource, "", "")
		return err == nil && ok
	}
}
