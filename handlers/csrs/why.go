package csrs

import (
	"github.com/labstack/echo/v4"
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrwhy"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// whyLine puts on a pending request's page the one line saying why it is
// pending (issue 47). The page reads what the queue cannot: whether the
// Node a kubelet request names exists, with one GET as the user (the same
// read the Node check makes; a Node the user may not read stays unknown).
func (h *Handlers) whyLine(c echo.Context, obj *certificatesv1.CertificateSigningRequest, p *model.CSRDetailPage) {
	if csrpolicy.DecisionOf(obj) != "" {
		return
	}
	var node csrwhy.NodeState
	req, err := h.d.Queue.Decode(obj.Spec.Request)
	if name := csrpolicy.NodeName(req); err == nil && name != "" && h.d.Lookup != nil {
		addrs, found, err := h.d.Lookup.NodeAddresses(c.Request().Context(), name)
		if err == nil {
			node.Known = true
			if found {
				node.Node = &csrpolicy.Node{Name: name, Addresses: addrs}
			}
		}
	}
	r := h.d.Queue.Why(obj, h.policies(c), node)
	p.WhyCode, p.WhyShort, p.Why = string(r.Code), r.Code.Short(), r.Message
}
