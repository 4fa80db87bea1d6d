package csrs

import (
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// askQueueQuestionsAtOnce starts, side by side, the access reviews the
// queue's page asks one after the other as it lays itself out (may the user
// decide, delete, create CSRs, list the policies). Each answer is kept 30 s
// and a question asked while the same one is under way waits for that one
// (kube.Access), so the page's own questions, asked later in its order, find
// their answers ready or on the way: a person's first page costs one review's
// round trip instead of one per question (issue 27: 200 tabs of 17 people
// opening the queue at once). It asks nothing the page would not ask.
func (h *Handlers) askQueueQuestionsAtOnce(c echo.Context) {
	if h.d.Access == nil {
		return
	}
	ctx := c.Request().Context()
	type question struct{ verb, group, resource, subresource string }
	var qs []question
	if !h.d.ReadOnly {
		qs = append(qs,
			question{"update", "certificates.k8s.io", "certificatesigningrequests", "approval"}, // decide.Decisions.MayDecide
			question{"delete", "certificates.k8s.io", "certificatesigningrequests", ""},         // the clean-up link, the delete ticks
			question{"create", "certificates.k8s.io", "certificatesigningrequests", ""},         // the New link
		)
	}
	if pol := h.d.Queue.Policies(); pol != nil && pol.Err == nil {
		gr := kube.CSRApprovalPolicyResource.GroupResource()
		qs = append(qs, question{"list", gr.Group, gr.Resource, ""}) // policies
	}
	for _, q := range qs {
		go func() { _, _ = h.d.Access.Can(ctx, q.verb, q.group, q.resource, q.subresource, "") }()
	}
}
