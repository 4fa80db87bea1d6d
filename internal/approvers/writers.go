package approvers

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Writing a CSRApprovalPolicy is approving (issue 43): `clusterdesk
// approver` decides, with its own grant of `approve` on a signer, what any
// policy naming the signer says. So the subjects that may write the policies
// approve too, through the approver, wherever it runs and is granted the
// signer. The guard shipped with the CRD (GuardPolicy) lets a subject write a
// policy only when it may approve every signer the policy names; where the
// guard is not installed (or not served: Kubernetes before 1.30), every
// writer may approve this way.

// GuardPolicy is the ValidatingAdmissionPolicy (and its binding) that lets
// only who may approve a signer write a policy naming it
// (deploy/base/csrapprovalpolicies-guard.yaml).
const GuardPolicy = "clusterdesk-csrapprovalpolicy-guard"

// writeVerbs are the verbs that change what the approver runs: a new
// policy, a changed one (update, or patch, which the authorizer checks as
// its own verb), a Deny policy removed.
var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// Writer is one subject of a ClusterRoleBinding that may write
// CSRApprovalPolicies (the kind is cluster-scoped: RoleBindings grant
// nothing on it).
type Writer struct {
	Subject rbacv1.Subject
	// Verbs it holds of writeVerbs, and the ClusterRoles granting them.
	Verbs, Via []string
	// Guarded: it may also approve the signer, so the guard lets it write
	// a policy naming it; otherwise the guard refuses such a policy, and only
	// the guard stands between it and approving through the approver.
	Guarded bool
	// Superusers: system:masters, which no authorizer (and so no guard's
	// check) stops.
	Superusers bool
}

// policyWriters walks the bindings for the subjects that may write the
// policies; approvers are the subjects holding approve on the signer.
func policyWriters(roles []rbacv1.ClusterRole, bindings []rbacv1.ClusterRoleBinding, approvers map[rbacv1.Subject]*Holder) []Writer {
	grants := map[string][]string{} // ClusterRole → the write verbs it grants
	for _, r := range roles {
		for _, v := range writeVerbs {
			if covers(r.Rules, rbacv1.PolicyRule{APIGroups: []string{"clusterdesk.io"}, Resources: []string{"csrapprovalpolicies"}, Verbs: []string{v}}) {
				grants[r.Name] = append(grants[r.Name], v)
			}
		}
	}
	writers := map[rbacv1.Subject]*Writer{}
	for _, b := range bindings {
		if b.RoleRef.Kind != "ClusterRole" || b.RoleRef.APIGroup != rbacv1.GroupName || len(grants[b.RoleRef.Name]) == 0 {
			continue
		}
		for _, s := range b.Subjects {
			s = normalize(s)
			w := writers[s]
			if w == nil {
				h := approvers[s]
				w = &Writer{Subject: s, Guarded: h != nil && len(h.Approve) > 0,
					Superusers: s.Kind == rbacv1.GroupKind && s.Name == Superusers}
				writers[s] = w
			}
			for _, v := range grants[b.RoleRef.Name] {
				w.Verbs = appendOnce(w.Verbs, v)
			}
			w.Via = appendOnce(w.Via, b.RoleRef.Name)
		}
	}
	out := make([]Writer, 0, len(writers))
	for _, w := range writers {
		slices.SortFunc(w.Verbs, func(a, b string) int { return slices.Index(writeVerbs, a) - slices.Index(writeVerbs, b) })
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b Writer) int { return bySubject(Holder{Subject: a.Subject}, Holder{Subject: b.Subject}) })
	return out
}
