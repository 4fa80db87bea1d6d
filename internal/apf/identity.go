package apf

import (
	"slices"
	"strings"
)

// Well-known user and group names (k8s.io/apiserver/pkg/authentication/user
// and .../serviceaccount).
const (
	GroupAuthenticated   = "system:authenticated"
	GroupUnauthenticated = "system:unauthenticated"
	GroupMasters         = "system:masters"
	GroupServiceAccounts = "system:serviceaccounts"
	UserAnonymous        = "system:anonymous"

	serviceAccountPrefix = "system:serviceaccount:"
)

// ServiceAccountUser is the user name and the groups the apiserver gives the
// service account namespace/name: "system:serviceaccount:<ns>:<name>", in
// "system:serviceaccounts" and "system:serviceaccounts:<ns>"
// (serviceaccount.MakeUsername and MakeGroupNames).
func ServiceAccountUser(namespace, name string) (user string, groups []string) {
	return serviceAccountPrefix + namespace + ":" + name,
		[]string{GroupServiceAccounts, GroupServiceAccounts + ":" + namespace}
}

// SplitServiceAccount parses a service account user name into its namespace
// and name; ok is false for any other user.
func SplitServiceAccount(user string) (namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(user, serviceAccountPrefix)
	if !found {
		return "", "", false
	}
	namespace, name, found = strings.Cut(rest, ":")
	if !found || namespace == "" || name == "" || strings.Contains(name, ":") {
		return "", "", false
	}
	return namespace, name, true
}

// WithAuthGroup adds the group every authenticated request carries, as the
// apiserver's impersonation filter does (endpoints/filters/impersonation):
// "system:authenticated" for any user but system:anonymous, unless the groups
// already name system:authenticated or system:unauthenticated;
// "system:unauthenticated" for system:anonymous.
func WithAuthGroup(user string, groups []string) []string {
	out := slices.Clone(groups)
	if user == UserAnonymous {
		if !slices.Contains(out, GroupUnauthenticated) {
			out = append(out, GroupUnauthenticated)
		}
		return out
	}
	if !slices.Contains(out, GroupAuthenticated) && !slices.Contains(out, GroupUnauthenticated) {
		out = append(out, GroupAuthenticated)
	}
	return out
}
