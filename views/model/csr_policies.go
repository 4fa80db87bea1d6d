package model

// CSRPoliciesPanel is the CSR page's "Approval policies" panel: each policy
// for the request's signer and what it would do (shadow mode: nothing acts on
// the verdicts). GET /csrs/<name>/policies, loaded after the page.
type CSRPoliciesPanel struct {
	// Note says why there is no verdict to show (no policy CRD, the user may
	// not list policies, none names this signer), or qualifies them.
	Note string
	// ListHref lists the policies (their CRD's objects).
	ListHref string
	Verdicts []PolicyVerdict
}

// PolicyVerdict is one policy's verdict on the request.
type PolicyVerdict struct {
	Policy string
	Href   string // the policy's object
	Badge  Badge  // would approve / would deny / does not decide / error
	// Reason and Message are what the decision's condition would carry.
	Reason, Message string
	// Error is why the policy could not decide: a compile error with its
	// line and column, a cost limit, an undecodable request.
	Error string
}
