package replay

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	engine "github.com/clusterdesk/clusterdesk/internal/replay"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// agreement is the policy page's "Agreement with the API server" (issue 45):
// the deployed policy and its bindings replayed over the recorded writes and
// compared, request by request, with the API server's validation_failure
// annotations (engine.Agree), as the signed-in user: only requests of
// resources they may list, namespaces and params read as them. The policy's
// page fetches it after it is shown (present.AgreementPending), so the page
// never waits for a replay.
type agreement struct {
	h *Handlers
	// slots lets one comparison run at a time in the process: every view
	// of a policy's page asks for one, and each reads the window's writes.
	// A view that waits past the replay's RequestTimeout is told to try again.
	slots chan struct{}
}

func newAgreement(h *Handlers) *agreement {
	return &agreement{h: h, slots: make(chan struct{}, 1)}
}

// register adds the section's route behind policies (the
// ValidatingAdmissionPolicies' access check). A GET: it changes nothing.
func (a *agreement) register(e *echo.Echo, policies echo.MiddlewareFunc) {
	e.GET(urls.PolicyAgreementRoute, a.get, policies)
}

// get answers the section: with htmx the panel alone, else a page of its own.
func (a *agreement) get(c echo.Context) error {
	name := c.Param("name")
	d := a.h.d
	// Without the ledger's grant: the policy page's section says so (panel),
	// the section's own page is a 403 naming it.
	if why := d.Refusal.Of(c); why != "" && !page.IsHTMX(c) {
		return echo.NewHTTPError(http.StatusForbidden, why)
	}
	o, err := d.Cluster.Get(kube.AdmissionPolicies, name)
	pol, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	if err != nil || !ok {
		return echo.NewHTTPError(http.StatusNotFound, "There is no ValidatingAdmissionPolicy "+name+".")
	}
	panel := a.panel(c, pol)
	kind, _ := d.Cluster.Kind(kube.AdmissionPolicies)
	p := model.AdmissionPolicyAgreementPage{PolicyName: name, PolicyHref: urls.Object(kind.ID, name), Panel: panel,
		Chrome: d.Chrome(c, "Agreement of "+name+" with the API server", kind.ID,
			model.Crumb{Label: kind.Title, Href: urls.List(kind.ID)}, model.Crumb{Label: name, Href: urls.Object(kind.ID, name)},
			model.Crumb{Label: "Agreement"})}
	return page.RenderPage(c, http.StatusOK, pages.AdmissionPolicyAgreement(p), pages.InsightView(panel))
}

// panel runs the comparison, bounded by RequestTimeout and the request, and words it.
func (a *agreement) panel(c echo.Context, pol *admissionregistrationv1.ValidatingAdmissionPolicy) model.Insight {
	d := a.h.d
	if why := d.Refusal.Of(c); why != "" {
		return present.AgreementMessage(why + " The comparison is not shown.")
	}
	if d.Writes == nil {
		return present.AgreementMessage("This console records no writes (it runs without a ledger, or the API server's audit webhook is not configured), so there is nothing to compare.")
	}
	var bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	all, err := d.Cluster.List(kube.AdmissionPolicyBindings)
	if err != nil {
		return present.AgreementMessage("The policy's bindings cannot be read (" + err.Error() + "), so there is nothing to compare.")
	}
	for _, o := range all {
		if b, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding); ok && b.Spec.PolicyName == pol.Name {
			bindings = append(bindings, b)
		}
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), d.RequestTimeout)
	defer cancel()
	select {
	case a.slots <- struct{}{}:
		defer func() { <-a.slots }()
	case <-ctx.Done():
		return present.AgreementMessage("Another comparison kept the console busy for " + d.RequestTimeout.String() + "; reload the page to try again.")
	}
	o := engine.AgreementOptions{Writes: d.Writes, Policy: pol, Bindings: bindings, MayList: a.h.mayList(ctx)}
	if d.Lookup != nil {
		o.Params = d.Lookup
	}
	var nsErr error
	o.Namespaces, nsErr = a.h.namespaces(ctx)
	res, err := engine.Agree(ctx, o)
	var bad *engine.BadDraftError
	stopped := ""
	switch {
	case errors.As(err, &bad):
		return present.AgreementMessage("The deployed policy cannot be replayed: " + bad.Err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		stopped = "The comparison was stopped after " + d.RequestTimeout.String() + ": the numbers cover the oldest part of the window."
	case err != nil:
		return present.AgreementMessage("The comparison failed: " + err.Error())
	}
	return present.Agreement(res, stopped, nsErr)
}
