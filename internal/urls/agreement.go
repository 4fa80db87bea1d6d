package urls

// PolicyAgreementRoute is the policy page's "Agreement with the API server"
// (handlers/replay, issue 45): the replay of the deployed version compared
// with the API server's audit annotations, which the policy's page fetches
// after it is shown; followed as a plain link, a page of its own.
const PolicyAgreementRoute = "/validatingadmissionpolicies/:name" + agreementSuffix

const agreementSuffix = "/agreement"

// PolicyAgreement is the agreement of the ValidatingAdmissionPolicy name
// (PolicyAgreementRoute).
func PolicyAgreement(name string) string {
	return Object("validatingadmissionpolicies", name) + agreementSuffix
}
