package ledger

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// policyLatest is how many of each version's latest decisions a policy's
// page lists.
const policyLatest = 5

// AddPolicyVersions adds to a CSR approval policy's page what each of its
// versions decided (issue 47, item 4), read from the ledger
// (ledger.PolicyStore: by the policy's name on an index, at most
// ledger.MaxPolicyVersions versions of policyLatest decisions each). The
// decisions are CSRs': a user who may not list CSRs is told so and reads
// none. Without a ledger, or one that does not answer in time, the section
// says so and the page is served.
func (h *Handlers) AddPolicyVersions(c echo.Context, policy string, p *model.DetailPage) {
	section := model.Section{Title: "Decisions by version", TestID: present.PolicyVersionsTestID}
	say := func(words string) {
		section.Fields = []model.Field{{Label: "Decisions", Value: words}}
		p.Sections = append(p.Sections, section)
	}
	store, ok := h.d.Store.(ledger.PolicyStore)
	switch {
	case h.d.Store == nil:
		say("This console keeps no ledger (--ledger off), so it cannot tell what the policy's versions decided.")
		return
	case !ok:
		return
	}
	if why := h.d.Refusal.Of(c); why != "" {
		say(why + " The decisions are not shown.")
		return
	}
	if !h.mayListCSRs(c) {
		say("You may not list CertificateSigningRequests, so the decisions are not shown.")
		return
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), h.d.Timeout)
	defer cancel()
	vs, err := store.PolicyVersions(ctx, policy, policyLatest)
	if err != nil {
		c.Logger().Error("ledger: a policy's versions: ", err)
		say("The ledger did not answer; the decisions are not shown.")
		return
	}
	var current int64
	if m, err := h.d.Cluster.Meta(kube.CSRApprovalPolicies, policy); err == nil && m != nil {
		current = m.GetGeneration()
	}
	p.Sections = append(p.Sections, present.PolicyVersionsSection(vs, current, time.Now()))
}

// mayListCSRs asks the access check of the CSRs as the ledger's pages do
// (viewableKinds).
func (h *Handlers) mayListCSRs(c echo.Context) bool {
	for _, st := range h.d.Cluster.Statuses() {
		if st.Kind.ID == kube.CSRs {
			return h.d.MayList(c, st.Kind)
		}
	}
	return false
}
