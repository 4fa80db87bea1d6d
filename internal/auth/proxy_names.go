package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// ReservedPrefix begins the names Kubernetes gives itself: system:masters
// (cluster-admin by default RBAC), system:nodes, system:serviceaccount:...
// "The prefix system: is reserved for Kubernetes system use" (kubernetes/website
// content/en/docs/reference/access-authn-authz/rbac.md, "Referring to subjects").
//
// The API server does not refuse such names from an identity provider by
// itself: its OIDC authenticator prefixes a claim with whatever prefix is
// configured, an empty one included, and returns the name as it is
// (kubernetes/kubernetes staging/src/k8s.io/apiserver/plugin/pkg/authenticator/token/oidc/oidc.go,
// getUsername and getGroups). What keeps IdP names out of system: there is the
// prefix: --oidc-username-prefix defaults to the issuer URL and "#" for every
// claim but email (pkg/kubeapiserver/options/authentication.go,
// kubernetes/kubernetes#31380), the structured AuthenticationConfiguration
// requires claimMappings.username.prefix and groups.prefix to be spelled out
// when a claim is mapped (staging/src/k8s.io/apiserver/pkg/apis/apiserver/validation/validation.go,
// validatePrefixClaimOrExpression), and without a prefix the documented
// userValidationRules refuse the names:
// "!user.username.startsWith('system:')" and
// "user.groups.all(group, !group.startsWith('system:'))", message
// "username cannot used reserved system: prefix"
// (content/en/docs/reference/access-authn-authz/authentication.md). The
// console applies the same rule to what its proxy names, always: it
// impersonates, and impersonation would pass system:masters on unchecked.
const ReservedPrefix = "system:"

// ErrReservedName is matched (errors.Is) by every ReservedNameError.
var ErrReservedName = errors.New("the proxy named a user or group in Kubernetes' reserved system: namespace")

// ReservedNameError is a user or group the proxy named that would be a
// system: name in Kubernetes. It names the value so the page and the log can
// say which one.
type ReservedNameError struct {
	Kind   string // "user" or "group"
	Name   string // the name as it would be impersonated (with the prefix)
	Header string // the header it came in
	Value  string // the header's whole value, as the proxy sent it
}

func (e *ReservedNameError) Error() string {
	return fmt.Sprintf("the proxy named the %s %q (%s: %q); names that start with %q belong to Kubernetes itself",
		e.Kind, e.Name, e.Header, e.Value, ReservedPrefix)
}

// Is makes errors.Is(err, ErrReservedName) true.
func (e *ReservedNameError) Is(target error) bool { return target == ErrReservedName }

func reserved(name string) bool { return strings.HasPrefix(name, ReservedPrefix) }

// CheckPrefix refuses a --proxy-user-prefix or --proxy-groups-prefix that does
// not keep names out of system:. One that starts with "system:" puts every
// name there; one that is the start of "system:" ("system", "sys") does for
// the names that finish it ("sys" + "tem:masters"). flag names the setting
// for the message. An empty prefix is fine: names are then checked one by one.
func CheckPrefix(flag, prefix string) error {
	if prefix != "" && (reserved(prefix) || strings.HasPrefix(ReservedPrefix, prefix)) {
		return fmt.Errorf("%s %q: a prefix must keep the proxy's names out of Kubernetes' reserved %q names (e.g. \"oidc:\")",
			flag, prefix, ReservedPrefix)
	}
	return nil
}

// groupsFrom reads the groups the proxy names in header, each with prefix.
//
// Both shapes proxies use are read: one header line per group (oauth2-proxy
// v7 adds a line per value of the groups claim, header.Add in
// oauth2-proxy/oauth2-proxy pkg/header/injector.go, newClaimInjector; so does
// kube-apiserver's own front-proxy authenticator read X-Remote-Group), and one
// line with the groups joined by commas (older proxies; and HTTP lets any hop
// fold repeated lines into one, RFC 9110 section 5.3). So every line is split
// at its commas. A group whose own name holds a comma cannot be told apart
// from two groups; the safe reading is the one applied: each piece is a group
// and each piece is checked, so "team,system:masters" is refused whether it
// was one group or two.
func groupsFrom(r *http.Request, header, prefix string) ([]string, error) {
	var groups []string
	for _, v := range r.Header.Values(header) {
		for _, g := range strings.Split(v, ",") {
			if g = strings.TrimSpace(g); g == "" {
				continue
			}
			g = prefix + g
			if reserved(g) {
				return nil, &ReservedNameError{Kind: "group", Name: g, Header: header, Value: v}
			}
			groups = append(groups, g)
		}
	}
	return groups, nil
}
