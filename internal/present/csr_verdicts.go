package present

import (
	"net/url"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/decide"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// verdictModels words the policies' verdicts on a pending request as chips,
// each linking to the queue filtered to that policy's verdict.
func verdictModels(vs []csrpolicy.Verdict) []model.CSRVerdict {
	if len(vs) == 0 {
		return nil
	}
	out := make([]model.CSRVerdict, 0, len(vs))
	for _, v := range vs {
		key := csrqueue.VerdictKey(v)
		m := model.CSRVerdict{Policy: v.Policy, Verdict: key, Label: key + ": " + v.Policy,
			Href: urls.CSRs + "?" + url.Values{"policy": {v.Policy}, "verdict": {key}}.Encode()}
		switch key {
		case csrqueue.VerdictApprove:
			m.Tone, m.Reason = model.ToneOK, verdictReason(v)
		case csrqueue.VerdictDeny:
			m.Tone, m.Reason = model.ToneWarning, verdictReason(v)
		default:
			m.Tone, m.Reason = model.ToneError, "cannot run: "+v.Err.Error()
		}
		out = append(out, m)
	}
	return out
}

func verdictReason(v csrpolicy.Verdict) string {
	r := string(v.Decision) + " (" + v.Reason + ")"
	if v.Message != "" {
		r += ": " + v.Message
	}
	return r
}

// policyFilter lays out the policy filter's choices, when the user sees
// policies, and the bulk "approve everything the policy approves" preview
// link on a view filtered to a policy the user may decide for (RBAC decides
// again per request on the preview and the write).
func policyFilter(page *model.CSRQueuePage, q CSRQueueQuery, env CSRQueueEnv) {
	if env.Policies == nil || len(env.Policies.Policies) == 0 {
		return
	}
	page.Policies = []model.CSROption{{Value: "", Label: "Any policy", Selected: q.Policy == ""}}
	for _, name := range env.Policies.Names() {
		page.Policies = append(page.Policies, model.CSROption{Value: name, Label: name, Selected: name == q.Policy})
	}
	page.Verdicts = []model.CSROption{{Value: "", Label: "Matches", Selected: q.Verdict == ""}}
	for _, v := range []struct{ key, label string }{
		{csrqueue.VerdictApprove, "Approves"}, {csrqueue.VerdictDeny, "Denies"}, {csrqueue.VerdictError, "Cannot run"},
	} {
		page.Verdicts = append(page.Verdicts, model.CSROption{Value: v.key, Label: v.label, Selected: v.key == q.Verdict})
	}
	if _, known := env.Policies.Lookup(q.Policy); known && env.MayDecide != nil {
		page.PolicyApproveHref = urls.CSRPolicyApprove(q.Policy)
	}
}

// CSRPolicyApprovePage lays out the preview of "approve everything policy
// approves" for the requests it lists (total: how many it approves in all
// that the user may decide); decode reads each request's subject.
func CSRPolicyApprovePage(version csrpolicy.Version, user string, items []*certificatesv1.CertificateSigningRequest, total int, decode func([]byte) (*csr.Request, error)) model.CSRPolicyApprovePage {
	policy := version.Policy
	_, _, msg := decide.Condition(user, true, decide.PolicyText(version))
	p := model.CSRPolicyApprovePage{
		Title: "Approve everything " + policy + " approves", Policy: policy, Reason: msg,
		Action:   urls.CSRPolicyApprove(policy),
		BackHref: urls.CSRs + "?" + url.Values{"policy": {policy}, "verdict": {csrqueue.VerdictApprove}}.Encode(),
		More:     total - len(items),
		Empty:    "Policy " + policy + " approves no pending request you may approve.",
	}
	for _, c := range items {
		req, err := decode(c.Spec.Request)
		_, short, _ := csrSubject(req, err)
		p.Rows = append(p.Rows, model.CSRPolicyApproveRow{Name: c.Name, Href: urls.CSR(c.Name), Subject: short,
			Requester: c.Spec.Username, Value: c.ResourceVersion + "/" + string(c.UID) + "/" + c.Name})
	}
	return p
}
