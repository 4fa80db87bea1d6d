package csrpolicies

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/approvers"
	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// The comparison's bounds, so that a cluster with tens of thousands of
// decided requests costs one bounded page: the newest decided requests of the
// policy's signers, and the Nodes they name (one GET each, as the user).
const (
	maxCompared = 2000
	maxNodes    = 100
)

// agreement compares a policy with the decisions people made on the
// requests still in the cluster (GET /csrs/-/policies/:policy).
func (h *Handlers) agreement(c echo.Context) error {
	name := c.Param("policy")
	chrome := h.d.Chrome(c, "Policy "+name+" against past decisions", kube.CSRs,
		model.Crumb{Label: "CertificateSigningRequests", Href: urls.CSRs}, model.Crumb{Label: "Policy " + name})
	if h.d.Lookup == nil {
		return echo.NewHTTPError(http.StatusServiceUnavailable, "clusterdesk runs without direct reads, so the policies are not read.")
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), h.d.LookupTimeout)
	defer cancel()
	compiled, err := h.compiled(ctx)
	if err != nil {
		return err // NotFound (no CRD), Forbidden: the error page says which
	}
	e, found := compiled.Lookup(name)
	if !found {
		return echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("There is no CSRApprovalPolicy %q.", name))
	}
	pol, prg, polErr := e.Policy, e.Program, e.Err
	var a csrpolicy.Agreement
	var past []csrpolicy.Past
	decided, automated := 0, 0
	if polErr == nil {
		all, err := h.d.Cluster.CSRs()
		if err != nil {
			return err
		}
		past, decided, automated = h.pastDecisions(ctx, pol, all)
		a = prg.Compare(ctx, past)
	}
	p := present.PolicyAgreementPage(pol, polErr, a, len(past), decided, automated)
	p.Chrome = chrome
	return page.Render(c, http.StatusOK, pages.PolicyAgreement(p))
}

// pastDecisions are the newest decided requests of the policy's signers (at
// most maxCompared, and how many there were) that people decided, and how
// many `clusterdesk approver` decided (left out: a policy running alone would
// otherwise agree with itself), decoded, with the Node each
// kubelet request names read as the user (at most maxNodes Nodes; a request
// naming one more sees node == null).
func (h *Handlers) pastDecisions(ctx context.Context, pol csrpolicy.Policy, all []*certificatesv1.CertificateSigningRequest) ([]csrpolicy.Past, int, int) {
	var decided []csrpolicy.Past
	automated := 0
	for _, c := range all {
		d := csrpolicy.DecisionOf(c)
		switch {
		case d == "" || !pol.AppliesTo(c.Spec.SignerName):
		case approvers.ByPolicyApprover(c):
			automated++
		default:
			decided = append(decided, csrpolicy.Past{Input: csrpolicy.Input{CSR: c}, Decision: d})
		}
	}
	n := len(decided)
	slices.SortFunc(decided, func(a, b csrpolicy.Past) int {
		return cmp.Or(csrqueue.DecidedAt(b.CSR).Compare(csrqueue.DecidedAt(a.CSR)), cmp.Compare(a.CSR.Name, b.CSR.Name))
	})
	past := decided[:min(len(decided), maxCompared)]
	nodes := map[string]*csrpolicy.Node{}
	for i := range past {
		in, c := &past[i].Input, past[i].CSR
		if req, err := csr.Decode(c.Spec.Request); err == nil {
			in.Request = req
		}
		if name := csrpolicy.NodeName(in.Request); name != "" {
			node, seen := nodes[name]
			if !seen && len(nodes) < maxNodes {
				if addrs, found, err := h.d.Lookup.NodeAddresses(ctx, name); err == nil && found {
					node = &csrpolicy.Node{Name: name, Addresses: addrs}
				}
				nodes[name] = node
			}
			in.Node = node
		}
	}
	return past, n, automated
}
