// Package approvers answers "who approves this signer?" for a CSR's signer:
// which users, groups and service accounts RBAC lets approve its requests
// (who.go), and which clients decided such requests recently, read from the
// requests' conditions and managed fields (deciders.go).
//
// It mirrors the API server's own rules. Approving needs two permissions:
// `update` on `certificatesigningrequests/approval` (the subresource the
// decision is written to) and `approve` on `signers` for the request's
// signer, by its exact name or `<domain>/*`, which the CertificateApproval
// admission plugin checks (kubernetes
// plugin/pkg/admission/certificates/util.go, IsAuthorizedForSignerName).
// Both are cluster-scoped, so only ClusterRoleBindings grant them: the RBAC
// authorizer visits RoleBindings only for a request in a namespace
// (kubernetes pkg/registry/rbac/validation/rule.go, VisitRulesFor).
// A rule is matched with k8s.io/component-helpers' RBAC comparator, the one
// the API server's escalation check uses (the same verb, group, resource,
// `*/subresource` and resourceNames rules as the authorizer).
//
// What RBAC cannot show is said, not guessed: members of system:masters
// bypass authorization; other authorizers (webhook, Node) and group
// membership live outside the cluster's objects.
package approvers
