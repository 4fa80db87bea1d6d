// Package csrpolicy evaluates CSR approval policies (issue 28): a policy
// names signers and decides, with a CEL expression over the decoded request,
// whether it approves or denies a pending request.
//
// The CEL environment is the API server's own base environment
// (k8s.io/apiserver/pkg/cel/environment, the one ValidatingAdmissionPolicy
// expressions compile in: regex, lists, strings, sets, the `ip` and `cidr`
// libraries, cost estimation) with two variables:
//
//   - request: the request as decoded from spec.request and the CSR's spec
//     (see Input.vars for every field): username, uid, groups, extra,
//     signerName, usages, expirationSeconds (absent when unset), subject
//     (commonName, organizations, organizationalUnits), dnsNames,
//     ipAddresses, uris, emailAddresses, keyAlgorithm, keyBits, requestsCA.
//   - node: for a request whose common name is system:node:<name>, the Node
//     of that name ({name, addresses}), null when it does not exist or was not
//     read.
//
// Cost limits are the API server's for one expression (celconfig.PerCallLimit):
// a policy that would loop over 200 SANs against 200 addresses stays bounded,
// and one that exceeds the limit is an evaluation error, never a verdict.
package csrpolicy
