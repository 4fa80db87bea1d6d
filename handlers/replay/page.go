package replay

import (
	"context"
	"errors"
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
		p.Error = noWrites
	}
	return p, nil
}

// form shows the replay form, its text the deployed policy and every binding of it.
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

// replay starts the draft of the form as a background job (jobs.go) and
// answers at once: htmx gets the outcome with the job's progress bar, a
// plain POST is sent to the job's page. A draft that does not parse, or a
// job over the limits, is said beside the form and runs nothing.
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
		var s jobSnapshot
		if s, p.Error, status = h.start(c, p); p.Error == "" {
			if !page.IsHTMX(c) {
				return c.Redirect(http.StatusSeeOther, urls.PolicyReplayJob(p.PolicyName, s.ID))
			}
			job := h.d.Jobs.Bar(s, p.Chrome.Live.URL, p.Chrome.CSRFToken)
			p.Job = &job
		}
	}
	if status != http.StatusOK && page.IsHTMX(c) {
		// htmx swaps no error response (web/js/behaviours.js lets in only
		// the lists' 400s): the fragment says what is wrong.
		status = http.StatusOK
	}
	return page.RenderPage(c, status, pages.Replay(p), pages.ReplayOutcome(p))
}

// start parses the page's draft and starts its replay as the signed-in
// user's job; a draft that cannot run, or a job over the limits, is the
// error's words and status.
func (h *Handlers) start(c echo.Context, p model.ReplayPage) (jobSnapshot, string, int) {
	draft, err := parseDraft(p.Draft)
	if err != nil {
		return jobSnapshot{}, err.Error(), http.StatusUnprocessableEntity
	}
	w := chosenWindow(p.Windows)
	now := time.Now()
	form := jobForm{policy: p.PolicyName, draft: p.Draft, window: w.value, since: now.Add(-w.d), until: now}
	dep, deployedWords := deployed(h.d.Cluster, draft)
	// The job outlives the request, not its identity: the access reviews,
	// namespaces and params are read as the user (kube.WithIdentity); its
	// cancellation and deadline are the job's own.
	id, _ := kube.IdentityFrom(c.Request().Context())
	s, err := h.d.Jobs.Start(page.JobOwner(c), jobProgress{form: form}, func(ctx context.Context, progress func(jobProgress)) (jobResult, error) {
		ctx, cancel := context.WithTimeout(kube.WithIdentity(ctx, id), h.d.Timeout)
		defer cancel()
		o := engine.Options{
			Writes: h.d.Writes, Window: ledger.WriteQuery{Since: form.since, Until: form.until},
			Draft: draft, Deployed: dep, MayList: h.mayList(ctx),
			Progress: func(pr engine.Progress) { progress(jobProgress{form: form, Progress: pr}) },
		}
		return h.run(ctx, o, w.words, deployedWords)
	})
	// Not into a variable the job's closure reads (the window's words):
	// the job runs on after this returns.
	refusal, status := h.d.Jobs.StartError(err)
	return s, refusal, status
}

// run replays o within the job's ctx (bounded by Timeout); a draft that
// cannot run, or a replay past Timeout, is the result's words. A cancel is
// the error: the job is then Cancelled.
func (h *Handlers) run(ctx context.Context, o engine.Options, window, deployedWords string) (jobResult, error) {
	if h.d.Lookup != nil {
		o.Params = h.d.Lookup
	}
	var nsErr error
	o.Namespaces, nsErr = h.namespaces(ctx)
	sum, err := engine.Run(ctx, o)
	switch {
	case errors.Is(err, context.Canceled):
		return jobResult{}, err
	case err != nil:
		return jobResult{err: failure(err, h.d.Timeout)}, nil
	}
	return jobResult{result: withNamespacesNote(present.ReplayResult(sum, window, deployedWords), nsErr)}, nil
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
