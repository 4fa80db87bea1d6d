package model

// AdmissionPolicyAgreementPage is a ValidatingAdmissionPolicy's "Agreement
// with the API server" on a page of its own (handlers/replay), for a browser
// that does not fetch it into the policy's page.
type AdmissionPolicyAgreementPage struct {
	Chrome     Chrome
	PolicyName string
	PolicyHref string
	Panel      Insight
}
