// Package approvers is "who approves this signer?" (GET /csrs/-/approvers):
// the RBAC subjects that may approve a signer's requests, read as the user,
// and the clients that decided its requests recently, read from the cache
// (internal/approvers walks and reads). The CSR page loads it after itself;
// the queue links it for the signer it is filtered by.
package approvers

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/approvers"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// Deps are the page's ports.
type Deps struct {
	page.Base
	Cluster ports.Cluster
	// Lookup lists the ClusterRoles and ClusterRoleBindings as the user; nil
	// (no lookups configured) leaves the walk out and the page says so.
	Lookup        ports.Lookup
	LookupTimeout time.Duration
	// Policies are the CSRApprovalPolicies compiled from the shared cache
	// (nil: none served), shown to a user Access says may list them.
	Policies func() *csrpolicy.Compiled
	Access   ports.Access
}

// Handlers serves the page.
type Handlers struct{ d Deps }

// New builds the page's handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// Register adds GET /csrs/-/approvers behind csrs, the access check of the
// CSR routes (the user may list CSRs).
func (h *Handlers) Register(e *echo.Echo, csrs echo.MiddlewareFunc) {
	e.GET(urls.CSRApproversRoute, h.approvers, csrs)
}

// maxSignerName bounds the signer parameter: a signer name is a DNS
// subdomain (253) and a path (kubernetes pkg/apis/certificates/validation,
// ValidateSignerName: at most 571 characters in all).
const maxSignerName = 571

func (h *Handlers) approvers(c echo.Context) error {
	signer, all := c.QueryParam("signer"), !c.QueryParams().Has("signer")
	if err := validSigner(signer); !all && err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	csrs, err := h.d.Cluster.CSRs()
	if err != nil {
		return err
	}
	who, unreadable := h.walk(c)
	policies := h.policies(c)
	if all {
		p := present.ApproversOverview(csrs, who, unreadable)
		for i := range p.Signers {
			p.Signers[i].Policies = present.ApproverPolicies(policies, p.Signers[i].Signer)
		}
		p.Chrome = h.d.Chrome(c, "Who approves each signer?", kube.CSRs,
			model.Crumb{Label: "CertificateSigningRequests", Href: urls.CSRs}, model.Crumb{Label: "Approvers"})
		return page.Render(c, http.StatusOK, pages.ApproversOverview(p))
	}
	var answer *approvers.Answer
	if who != nil {
		a := who(signer)
		answer = &a
	}
	p := present.ApproversPage(signer, answer, unreadable, csrs, time.Now())
	p.Policies = present.ApproverPolicies(policies, signer)
	if page.FragmentWanted(c) {
		return page.Render(c, http.StatusOK, pages.ApproversPanel(p))
	}
	p.Chrome = h.d.Chrome(c, "Who approves "+signer+"?", kube.CSRs,
		model.Crumb{Label: "CertificateSigningRequests", Href: urls.CSRs}, model.Crumb{Label: "Approvers of " + signer})
	return page.Render(c, http.StatusOK, pages.Approvers(p))
}

// policies are the CSRApprovalPolicies from the shared cache when the user
// may list them; nil otherwise, or when none are served.
func (h *Handlers) policies(c echo.Context) *csrpolicy.Compiled {
	if h.d.Policies == nil || h.d.Access == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), h.d.LookupTimeout)
	defer cancel()
	gr := kube.CSRApprovalPolicyResource.GroupResource()
	if ok, err := h.d.Access.Can(ctx, "list", gr.Group, gr.Resource, "", ""); err != nil || !ok {
		return nil
	}
	if pol := h.d.Policies(); pol != nil && pol.Err == nil {
		return pol
	}
	return nil
}

// walk lists the ClusterRoles and ClusterRoleBindings as the user, once per
// view, and answers for any signer from them; nil and why when it cannot.
func (h *Handlers) walk(c echo.Context) (func(signer string) approvers.Answer, string) {
	if h.d.Lookup == nil {
		return nil, "clusterdesk runs without direct reads, so the ClusterRoleBindings are not walked."
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), h.d.LookupTimeout)
	defer cancel()
	roles, bindings, err := h.d.Lookup.ClusterRBAC(ctx)
	switch {
	case err == nil:
		return func(signer string) approvers.Answer { return approvers.Who(signer, roles, bindings) }, ""
	case apierrors.IsForbidden(err):
		return nil, "You may not list ClusterRoles and ClusterRoleBindings, so who may approve cannot be read as you."
	case errors.Is(err, context.DeadlineExceeded):
		return nil, "The API server did not list the ClusterRoles and ClusterRoleBindings in time; reload to try again."
	}
	h.d.Log.Warn("approvers: RBAC walk failed", "err", err)
	return nil, "The ClusterRoles and ClusterRoleBindings could not be listed: " + err.Error()
}

// validSigner refuses what cannot be a signer name, before any read.
func validSigner(s string) error {
	switch {
	case s == "":
		return errors.New("Name a signer: /csrs/-/approvers?signer=<domain>/<path>.")
	case len(s) > maxSignerName:
		return errors.New("A signer name has at most 571 characters.")
	case !strings.Contains(s, "/"):
		return errors.New("A signer name is <domain>/<path>, e.g. kubernetes.io/kube-apiserver-client.")
	case strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }) >= 0:
		return errors.New("A signer name has no spaces or control characters.")
	}
	return nil
}
