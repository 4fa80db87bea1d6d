package model

// ApproversPage answers "who approves this signer?" (GET /csrs/-/approvers):
// the RBAC subjects that may approve its requests, those holding half of
// what it takes, and the clients that decided its requests recently.
type ApproversPage struct {
	Chrome Chrome
	Signer string
	// Unreadable says why the RBAC walk could not be made (the user may not
	// list ClusterRoles or ClusterRoleBindings, or the API server failed);
	// the deciders are still shown, from the cache.
	Unreadable string
	// Nobody: no subject but system:masters may approve; the page says the
	// signer's requests will stay pending.
	Nobody bool
	// OnlyAdmins: only subjects that may approve every signer (cluster-admin
	// and the like) may approve this one; nobody was given it in particular.
	OnlyAdmins bool
	Approvers  []ApproverRow
	Partial    []ApproverRow
	// PolicyWriters may write CSRApprovalPolicies: through `clusterdesk
	// approver`, writing a policy is approving; Guard names the admission
	// policy that lets only those who may approve the signer write one.
	PolicyWriters []PolicyWriterRow
	Guard         string
	// Policies are the CSRApprovalPolicies naming the signer, with whom each
	// covers (issue 47, item 2); nil when the user may not list them.
	Policies []ApproverPolicy
	Deciders []DeciderRow
	// Pending counts the signer's requests waiting for a decision, and
	// PendingHref lists them in the queue.
	Pending     int
	PendingHref string
}

// ApproverRow is one subject of a ClusterRoleBinding.
type ApproverRow struct {
	Kind string // User, Group or ServiceAccount
	Name string // as the API server names it (system:serviceaccount:ns:name)
	// Via names the ClusterRoles granting it; Holds says which of the two
	// permissions a partial holder has.
	Via   string
	Holds string
	// Superusers marks system:masters, which the API server lets do anything.
	Superusers bool
	// Broad: the subject may approve every signer (an administrator).
	Broad bool
}

// PolicyWriterRow is one subject that may write CSRApprovalPolicies.
type PolicyWriterRow struct {
	Kind, Name string
	Verbs      string // "create, update"
	Via        string // the ClusterRoles
	// Guarded: it may approve the signer too, so the guard lets it write a
	// policy naming it. Superusers: system:masters, which no guard stops.
	Guarded, Superusers bool
}

// DeciderRow is one client that decided requests for the signer.
type DeciderRow struct {
	Manager          string
	Approved, Denied int
	Reasons          string
	Last             string // "3m ago"
}

// ApproversOverview is every signer the cluster's requests name, with who
// may approve each (GET /csrs/-/approvers without a signer; the queue links
// it beside its signer filter).
type ApproversOverview struct {
	Chrome     Chrome
	Unreadable string // as ApproversPage's
	Signers    []SignerApprovers
}

// SignerApprovers is one signer's line of the overview.
type SignerApprovers struct {
	Signer  string
	Href    string // the signer's own answer
	Pending int
	// Approvers counts the subjects granted this signer in particular;
	// Admins those that may approve every signer, system:masters aside.
	// Nobody: none but system:masters may.
	Approvers, Admins int
	Nobody            bool
	// Policies are the CSRApprovalPolicies naming the signer.
	Policies []ApproverPolicy
}

// ApproverPolicy is one CSRApprovalPolicy naming a signer: what it decides
// and whom it covers (csrpolicy.Requesters.String: "every requester",
// "users a, b; groups c").
type ApproverPolicy struct {
	Name, Href string
	Decision   string // Approve, Deny, or "cannot run"
	Requesters string
}
