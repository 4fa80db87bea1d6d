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
	// AgreementHref compares the policy with the decisions people made.
	AgreementHref string
	Badge         Badge // would approve / would deny / does not decide / not this requester / error
	// Requesters words whom the policy covers (csrpolicy.Requesters.String:
	// "every requester", "users a, b; groups c").
	Requesters string
	// Reason and Message are what the decision's condition would carry.
	Reason, Message string
	// Error is why the policy could not decide: a compile error with its
	// line and column, a cost limit, an undecodable request.
	Error string
}

// PolicyAgreementPage is how one policy would have decided the requests
// people already decided (GET /csrs/-/policies/<name>).
type PolicyAgreementPage struct {
	Chrome     Chrome
	Policy     string
	PolicyHref string // the policy's object, to edit it
	Signers    string
	Decision   string
	// Requesters words whom the policy covers (issue 47, item 2).
	Requesters string
	// Error: the policy does not read or compile (and nothing was compared).
	Error string
	// Note qualifies the comparison: which requests, how many, what was left out.
	Note                       string
	Checked, Agreed, Undecided int
	Errors                     int
	FirstError                 string
	Disagreements              []Disagreement
}

// Disagreement is one decided request the policy would have decided the
// other way.
type Disagreement struct {
	Name, Href string
	// People is what was decided (Approved or Denied), By who decided (a
	// client: kubectl, clusterdesk...), Reason and Message its condition's.
	People, By, Reason, Message string
	// Policy is what the policy would have done.
	Policy string
}
