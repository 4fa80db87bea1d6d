package present

import (
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// ApproverPolicies are the policies of c naming signer, in name order, each
// with what it decides and whom it covers (issue 47, item 2): "who approves"
// says which requesters a policy decides for. A policy that cannot run is
// listed when its signers can be read. nil c: none to show.
func ApproverPolicies(c *csrpolicy.Compiled, signer string) []model.ApproverPolicy {
	if c == nil {
		return nil
	}
	var out []model.ApproverPolicy
	for _, e := range c.Policies {
		if !e.Policy.AppliesTo(signer) {
			continue
		}
		d := string(e.Policy.Decision)
		if e.Err != nil {
			d = "cannot run"
		}
		out = append(out, model.ApproverPolicy{Name: e.Policy.Name, Href: urls.Object(csrPolicyKind, e.Policy.Name),
			Decision: d, Requesters: e.Policy.Requesters.String()})
	}
	return out
}
