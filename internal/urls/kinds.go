package urls

import "net/url"

// The CSR approval queue and a CSR's own pages and decisions. Static segments
// ("bulk", "groups") win over :name in the router; CSR names are DNS
// subdomains, and no such name is a group ID's route.
const (
	CSRs                = "/csrs"
	CSRBulk             = CSRs + "/bulk"
	CSRCertificateRoute = CSRs + "/:name/certificate"
	CSRNodeCheckRoute   = CSRs + "/:name/node-check"
	CSRSANsRoute        = CSRs + "/:name/sans"
	CSRPoliciesRoute    = CSRs + "/:name/policies"
	CSRApproveRoute     = CSRs + "/:name/approve"
	CSRDenyRoute        = CSRs + "/:name/deny"
	CSRIssueRoute       = CSRs + "/:name/issue"
	CSRGroupRoute       = CSRs + "/groups/:id"
	CSRGroupDecideRoute = CSRGroupRoute + "/decide"
	// CSRApproversRoute answers who may approve a signer's requests; "-" is
	// no CSR name (names start with a letter or digit).
	CSRApproversRoute = CSRs + "/-/approvers"
	// CSRPolicyRoute compares an approval policy with past decisions.
	CSRPolicyRoute = CSRs + "/-/policies/:policy"
	// CSRPolicyApproveRoute previews (GET) and confirms (POST) approving
	// every pending request a policy approves.
	CSRPolicyApproveRoute = CSRPolicyRoute + "/approve"
)

// CSRApprovers is who may approve the requests of signer.
func CSRApprovers(signer string) string {
	return CSRApproversRoute + "?" + url.Values{"signer": {signer}}.Encode()
}

// CSR is the page of the CSR name.
func CSR(name string) string { return CSRs + "/" + Segment(name) }

// CSRCertificate is the issued certificate of the CSR name, as a download.
func CSRCertificate(name string) string { return CSR(name) + "/certificate" }

// CSRSANs is the SANs of the CSR name that its queue row leaves out, as
// the row's disclosure fetches them; uid is the request the row showed.
func CSRSANs(name, uid string) string {
	return CSR(name) + "/sans?" + url.Values{"uid": {uid}}.Encode()
}

// CSRNodeCheck is the comparison of a kubelet-serving CSR with its Node.
func CSRNodeCheck(name string) string { return CSR(name) + "/node-check" }

// CSRPolicy compares the approval policy name with the decisions people made.
func CSRPolicy(name string) string { return CSRs + "/-/policies/" + Segment(name) }

// CSRPolicyApprove previews approving every pending request the policy
// name approves.
func CSRPolicyApprove(name string) string { return CSRPolicy(name) + "/approve" }

// CSRPolicies is what the approval policies would do with the CSR name.
func CSRPolicies(name string) string { return CSR(name) + "/policies" }

// CSRApprove is where a CSR's approve form posts.
func CSRApprove(name string) string { return CSR(name) + "/approve" }

// CSRDeny is where a CSR's deny form posts.
func CSRDeny(name string) string { return CSR(name) + "/deny" }

// CSRIssue is where the upload of an externally issued certificate posts.
func CSRIssue(name string) string { return CSR(name) + "/issue" }

// CSRQueueGroup is the queue filtered to one storm or duplicate set.
func CSRQueueGroup(id string) string { return WithQuery(CSRs, url.Values{"group": {id}}) }

// CSRGroup is the preview of the group action on the storm id.
func CSRGroup(id, action string) string {
	return WithQuery(CSRs+"/groups/"+Segment(id), url.Values{"action": {action}})
}

// CSRGroupDecide is where a confirmed group action posts.
func CSRGroupDecide(id string) string { return CSRs + "/groups/" + Segment(id) + "/decide" }

// FlowSchemas, their classifier and their structured form. "-" is no FlowSchema
// name (names are DNS subdomains), so the classifier and the new form cannot
// shadow an object; "<name>/form" is a sub-path.
const (
	FlowSchemas         = "/flowschemas"
	Classify            = FlowSchemas + "/-/classify"
	ClassifyOld         = FlowSchemas + "/classify" // the classifier's old address (apf_form.go)
	FlowSchemaFormNew   = FlowSchemas + "/-/new"
	FlowSchemaFormRoute = FlowSchemas + "/:name/form"
)

// FlowSchemaForm is the structured form of the FlowSchema name.
func FlowSchemaForm(name string) string { return FlowSchemas + "/" + Segment(name) + "/form" }

// CRDs, a version's schema explorer, and their custom resources; ns is "_"
// for a cluster-scoped custom resource.
const (
	CRDs             = "/crds"
	CRDSchemaRoute   = CRDs + "/:name/schema/:version"
	CRInstancesRoute = CRDs + "/:name/instances"
	CRInstanceRoute  = CRInstancesRoute + "/:ns/:obj"
	// A bulk deletion of a CRD's custom resources (static "-" wins over :ns).
	CRCleanupRoute        = CRInstancesRoute + cleanupSuffix
	CRCleanupConfirmRoute = CRCleanupRoute + confirmSuffix
	CRNewRoute            = CRInstancesRoute + newSuffix
	CRCreateRoute         = CRInstancesRoute + createSuffix
	CREditRoute           = CRInstanceRoute + editSuffix
	CRPreviewRoute        = CRInstanceRoute + previewSuffix
	CRApplyRoute          = CRInstanceRoute + applySuffix
	CRRebaseRoute         = CRInstanceRoute + rebaseSuffix
	CRDeleteRoute         = CRInstanceRoute + deleteSuffix
)

// ClusterScoped stands for the namespace of a cluster-scoped custom resource.
const ClusterScoped = "_"

// CRDSchema is the schema page of one version of the CRD crd, focused on path ("" for the root).
func CRDSchema(crd, version, path string) string {
	u := CRDs + "/" + Segment(crd) + "/schema/" + Segment(version)
	if path != "" {
		u = WithQuery(u, url.Values{"path": {path}})
	}
	return u
}

// CRInstances is the list of the custom resources of the CRD crd.
func CRInstances(crd string) string { return CRDs + "/" + Segment(crd) + "/instances" }

// CRInstance is the page of one custom resource; namespace "" is cluster-scoped.
func CRInstance(crd, namespace, name string) string {
	if namespace == "" {
		namespace = ClusterScoped
	}
	return CRInstances(crd) + "/" + Segment(namespace) + "/" + Segment(name)
}

// CRCleanup is the bulk deletion preview of the CRD crd's custom resources.
func CRCleanup(crd string) string { return CRInstances(crd) + cleanupSuffix }

// CRCleanupConfirm is where CRCleanup's confirmation posts.
func CRCleanupConfirm(crd string) string { return CRCleanup(crd) + confirmSuffix }

// CRNew is the editor that creates a custom resource of the CRD crd.
func CRNew(crd string) string { return CRInstances(crd) + newSuffix }

// CRCreate is where CRNew's form posts.
func CRCreate(crd string) string { return CRInstances(crd) + createSuffix }

// Intercept answers which webhooks would intercept a request.
const Intercept = "/validatingwebhooks/intercept"
