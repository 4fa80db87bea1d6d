// Package csrpolicies is the CSR page's "Approval policies" panel (GET
// /csrs/:name/policies): what each CSRApprovalPolicy naming the request's
// signer would do with it, in shadow mode. The policies and the Node a
// kubelet request names are read as the user; the CEL runs in
// internal/csrpolicy with the API server's environment and cost limits.
package csrpolicies

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// Deps are the panel's ports.
type Deps struct {
	page.Base
	Cluster       ports.Cluster
	Lookup        ports.Lookup // nil: no direct reads; the panel says so
	LookupTimeout time.Duration
	// Policies are the policies compiled from the shared policy cache; nil:
	// they are listed as the user on each view. Access then says whether
	// the user may list them (the shared cache is read for them only then).
	Policies func() *csrpolicy.Compiled
	Access   ports.Access
}

// Handlers serves the panel.
type Handlers struct{ d Deps }

// New builds the panel's handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// Register adds GET /csrs/:name/policies and /csrs/-/policies/:policy behind
// csrs (the user may list CSRs).
func (h *Handlers) Register(e *echo.Echo, csrs echo.MiddlewareFunc) {
	e.GET(urls.CSRPoliciesRoute, h.policies, csrs)
	e.GET(urls.CSRPolicyRoute, h.agreement, csrs)
}

func (h *Handlers) policies(c echo.Context) error {
	name := c.Param("name")
	obj, err := h.d.Cluster.CSR(name)
	if err != nil {
		return err // the error page maps NotFound to 404
	}
	p := h.panel(c.Request().Context(), obj.Spec.SignerName, csrpolicy.Input{CSR: obj})
	if page.FragmentWanted(c) {
		return page.Render(c, http.StatusOK, pages.CSRPoliciesPanel(p))
	}
	chrome := h.d.Chrome(c, "Approval policies for "+name, kube.CSRs,
		model.Crumb{Label: "CertificateSigningRequests", Href: urls.CSRs}, model.Crumb{Label: name, Href: urls.CSR(name)},
		model.Crumb{Label: "Approval policies"})
	return page.Render(c, http.StatusOK, pages.CSRPolicies(chrome, name, p))
}

// panel lists the policies as the user and runs those naming signer.
func (h *Handlers) panel(ctx context.Context, signer string, in csrpolicy.Input) model.CSRPoliciesPanel {
	if h.d.Lookup == nil {
		return model.CSRPoliciesPanel{Note: "clusterdesk runs without direct reads, so the policies are not read."}
	}
	ctx, cancel := context.WithTimeout(ctx, h.d.LookupTimeout)
	defer cancel()
	compiled, err := h.compiled(ctx)
	switch {
	case apierrors.IsNotFound(err):
		return model.CSRPoliciesPanel{Note: "The CSRApprovalPolicy CRD is not installed (deploy/base/csrapprovalpolicies.yaml)."}
	case apierrors.IsForbidden(err):
		return model.CSRPoliciesPanel{Note: "You may not list CSRApprovalPolicies."}
	case errors.Is(err, context.DeadlineExceeded):
		return model.CSRPoliciesPanel{Note: "The API server did not list the policies in time; reload to try again."}
	case err != nil:
		h.d.Log.Warn("csr policies: list failed", "err", err)
		return model.CSRPoliciesPanel{Note: "The policies could not be listed: " + err.Error()}
	}
	if req, err := csr.Decode(in.CSR.Spec.Request); err == nil {
		in.Request = req
	}
	if node := csrpolicy.NodeName(in.Request); node != "" {
		// A Node that does not exist, or one the user may not read, is null
		// to the policies: a rule needing it does not match.
		if addrs, found, err := h.d.Lookup.NodeAddresses(ctx, node); err == nil && found {
			in.Node = &csrpolicy.Node{Name: node, Addresses: addrs}
		}
	}
	var outcomes []present.PolicyOutcome
	others := 0
	for _, e := range compiled.Policies {
		if e.Err == nil && !e.Policy.AppliesTo(signer) {
			others++
			continue
		}
		o := present.PolicyOutcome{Policy: e.Policy, Err: e.Err}
		switch {
		case e.Err != nil:
		case !e.Policy.Covers(in.CSR.Spec.Username, in.CSR.Spec.Groups):
			// spec.requesters: the approver would not evaluate it either.
			o.NotCovered = true
		default:
			o.Verdict = e.Program.Evaluate(ctx, in)
		}
		outcomes = append(outcomes, o)
	}
	return present.CSRPoliciesPanel(outcomes, others)
}

// compiled returns the policies compiled: from the shared cache when the
// user may list them (Forbidden otherwise; NotFound while their CRD is not
// served), else listed as the user and compiled for this view.
func (h *Handlers) compiled(ctx context.Context) (*csrpolicy.Compiled, error) {
	if h.d.Policies == nil {
		objs, err := h.d.Lookup.CSRApprovalPolicies(ctx)
		if err != nil {
			return nil, err
		}
		ptrs := make([]*unstructured.Unstructured, len(objs))
		for i := range objs {
			ptrs[i] = &objs[i]
		}
		return csrpolicy.CompileAll(1, ptrs), nil
	}
	gr := kube.CSRApprovalPolicyResource.GroupResource()
	ok, err := h.d.Access.Can(ctx, "list", gr.Group, gr.Resource, "", "")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierrors.NewForbidden(gr, "", errors.New("you may not list them"))
	}
	c := h.d.Policies()
	if c.Err != nil {
		return nil, apierrors.NewNotFound(gr, "")
	}
	return c, nil
}
