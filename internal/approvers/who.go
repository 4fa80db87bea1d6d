package approvers

import (
	"cmp"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/component-helpers/auth/rbac/validation"
)

// Superusers is the group the API server lets do anything without asking
// any authorizer (kubernetes staging/src/k8s.io/apiserver/pkg/authorization/
// authorizerfactory, privilegedGroupAuthorizer).
const Superusers = "system:masters"

// Holder is one subject of a ClusterRoleBinding and what it holds for the
// signer, with the ClusterRoles that grant it.
type Holder struct {
	Subject rbacv1.Subject
	// Approve: ClusterRoles granting `approve` on the signer (or its domain's
	// wildcard); Update: those granting `update` on the approval subresource.
	Approve, Update []string
	// Broad: every role granting approve grants it on every signer
	// (cluster-admin's `*`, or signers without resourceNames): the subject is
	// an administrator, not an approver of this signer in particular.
	Broad bool
}

// Superusers is true for the group system:masters.
func (h Holder) Superusers() bool {
	return h.Subject.Kind == rbacv1.GroupKind && h.Subject.Name == Superusers
}

// Can is true when the subject holds both permissions itself.
func (h Holder) Can() bool { return len(h.Approve) > 0 && len(h.Update) > 0 }

// Answer is who may approve requests for one signer.
type Answer struct {
	Signer string
	// Approvers hold both permissions; Partial hold one (a member of a group
	// that holds the other can still approve, which RBAC objects cannot show).
	Approvers, Partial []Holder
	// PolicyWriters may write CSRApprovalPolicies, and so approve through
	// `clusterdesk approver` where it is granted the signer (writers.go).
	PolicyWriters []Writer
}

// Nobody is true when no subject but the superusers may approve: the
// signer's requests stay pending unless a member of system:masters decides.
func (a Answer) Nobody() bool {
	for _, h := range a.Approvers {
		if !h.Superusers() {
			return false
		}
	}
	return true
}

// Specific is true when some subject other than system:masters may approve
// through a grant naming this signer (or its domain): someone was given the
// job. Without one, only administrators who may approve every signer can,
// which in practice leaves the requests pending.
func (a Answer) Specific() bool {
	for _, h := range a.Approvers {
		if !h.Broad {
			return true
		}
	}
	return false
}

// Who walks the ClusterRoleBindings and the ClusterRoles they name. A binding
// whose ClusterRole is missing grants nothing (the authorizer skips it).
func Who(signer string, roles []rbacv1.ClusterRole, bindings []rbacv1.ClusterRoleBinding) Answer {
	approve, update := permissions(signer)
	grants := map[string]grant{} // by ClusterRole name
	for _, r := range roles {
		grants[r.Name] = grant{
			approve: covers(r.Rules, approve[0]) || covers(r.Rules, approve[1]),
			update:  covers(r.Rules, update),
			every:   covers(r.Rules, approve[2]),
		}
	}
	holders := map[rbacv1.Subject]*Holder{}
	for _, b := range bindings {
		if b.RoleRef.Kind != "ClusterRole" || b.RoleRef.APIGroup != rbacv1.GroupName {
			continue
		}
		g, ok := grants[b.RoleRef.Name]
		if !ok || !(g.approve || g.update) {
			continue
		}
		for _, s := range b.Subjects {
			s = normalize(s)
			h := holders[s]
			if h == nil {
				h = &Holder{Subject: s}
				holders[s] = h
			}
			if g.approve {
				h.Broad = (len(h.Approve) == 0 || h.Broad) && g.every
				h.Approve = appendOnce(h.Approve, b.RoleRef.Name)
			}
			if g.update {
				h.Update = appendOnce(h.Update, b.RoleRef.Name)
			}
		}
	}
	a := Answer{Signer: signer, PolicyWriters: policyWriters(roles, bindings, holders)}
	for _, h := range holders {
		if h.Can() {
			a.Approvers = append(a.Approvers, *h)
		} else {
			a.Partial = append(a.Partial, *h)
		}
	}
	slices.SortFunc(a.Approvers, bySubject)
	slices.SortFunc(a.Partial, bySubject)
	return a
}

// grant is what one ClusterRole grants: approve on the signer, update on the
// approval subresource, approve on every signer.
type grant struct{ approve, update, every bool }

// permissions are the rules an approver needs, as the API server checks them:
// approve on the signer's name or on "<domain>/*" (either suffices), and
// update on the approval subresource of any request; approve[2], without a
// name, is approve on every signer (only a rule without resourceNames covers it).
func permissions(signer string) (approve [3]rbacv1.PolicyRule, update rbacv1.PolicyRule) {
	domain, _, _ := strings.Cut(signer, "/")
	for i, names := range [][]string{{signer}, {domain + "/*"}, nil} {
		approve[i] = rbacv1.PolicyRule{
			APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"},
			Verbs: []string{"approve"}, ResourceNames: names,
		}
	}
	update = rbacv1.PolicyRule{
		APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests/approval"},
		Verbs: []string{"update"},
	}
	return approve, update
}

func covers(rules []rbacv1.PolicyRule, want rbacv1.PolicyRule) bool {
	ok, _ := validation.Covers(rules, []rbacv1.PolicyRule{want})
	return ok
}

// normalize makes one subject compare equal however a binding spells it:
// APIGroup is implied by the kind, a ServiceAccount has none.
func normalize(s rbacv1.Subject) rbacv1.Subject {
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		s.APIGroup = ""
	default:
		s.APIGroup = rbacv1.GroupName
		s.Namespace = ""
	}
	return s
}

func appendOnce(list []string, name string) []string {
	if slices.Contains(list, name) {
		return list
	}
	return append(list, name)
}

// bySubject orders groups, then users, then service accounts, each by name.
func bySubject(a, b Holder) int {
	rank := func(k string) int {
		switch k {
		case rbacv1.GroupKind:
			return 0
		case rbacv1.UserKind:
			return 1
		}
		return 2
	}
	return cmp.Or(cmp.Compare(rank(a.Subject.Kind), rank(b.Subject.Kind)),
		cmp.Compare(a.Subject.Namespace, b.Subject.Namespace), cmp.Compare(a.Subject.Name, b.Subject.Name))
}

// Name is how the console writes a subject: a user or group by its name, a
// service account as the user name the API server gives it.
func Name(s rbacv1.Subject) string {
	if s.Kind == rbacv1.ServiceAccountKind {
		return "system:serviceaccount:" + s.Namespace + ":" + s.Name
	}
	return s.Name
}
