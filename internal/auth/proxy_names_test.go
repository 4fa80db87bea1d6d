package auth

import (
	"errors"
	"slices"
	"testing"
)

// The attack: whoever can name a group in the identity provider (or a user)
// names it system:masters, or hides it in a comma-joined value, and the
// console would impersonate Kubernetes' own cluster-admin group. Without a
// prefix every such name is refused, in either header shape, and the error
// names the value.
func TestProxyRefusesSystemNames(t *testing.T) {
	p := &Proxy{UserHeader: "X-Forwarded-User", GroupsHeader: "X-Forwarded-Groups", SecretHeader: "X-Proxy-Secret",
		Secret: []byte(testProxySecret)}
	for _, tc := range []struct {
		name   string
		user   string
		groups []string // header lines
		want   ReservedNameError
	}{
		{"comma-joined group", "bob", []string{"team,system:masters"},
			ReservedNameError{Kind: "group", Name: "system:masters", Header: "X-Forwarded-Groups", Value: "team,system:masters"}},
		{"comma-joined, spaces", "bob", []string{"team , \tsystem:masters "},
			ReservedNameError{Kind: "group", Name: "system:masters", Header: "X-Forwarded-Groups", Value: "team , \tsystem:masters "}},
		{"repeated header line", "bob", []string{"team", "system:masters"},
			ReservedNameError{Kind: "group", Name: "system:masters", Header: "X-Forwarded-Groups", Value: "system:masters"}},
		{"one group", "bob", []string{"system:nodes"},
			ReservedNameError{Kind: "group", Name: "system:nodes", Header: "X-Forwarded-Groups", Value: "system:nodes"}},
		{"system user", "system:admin", []string{"team"},
			ReservedNameError{Kind: "user", Name: "system:admin", Header: "X-Forwarded-User", Value: "system:admin"}},
		{"service account user", " system:serviceaccount:kube-system:generic-garbage-collector", nil,
			ReservedNameError{Kind: "user", Name: "system:serviceaccount:kube-system:generic-garbage-collector",
				Header: "X-Forwarded-User", Value: " system:serviceaccount:kube-system:generic-garbage-collector"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := proxyRequest("127.0.0.1:40000", nil)
			r.Header.Set("X-Forwarded-User", tc.user)
			r.Header.Del("X-Forwarded-Groups")
			for _, g := range tc.groups {
				r.Header.Add("X-Forwarded-Groups", g)
			}
			id, err := p.Identify(r)
			var rn *ReservedNameError
			if !errors.As(err, &rn) || !errors.Is(err, ErrReservedName) || id.User != "" || id.Groups != nil {
				t.Fatalf("Identify = %+v, %v; want a ReservedNameError", id, err)
			}
			if *rn != tc.want {
				t.Fatalf("refused %+v, want %+v", *rn, tc.want)
			}
		})
	}
	// Names that only look alike are other names to the API server, which
	// compares bytes: they pass.
	r := proxyRequest("127.0.0.1:40000", nil)
	r.Header.Set("X-Forwarded-User", "System:admin")
	r.Header.Set("X-Forwarded-Groups", "systems:masters,team-system:masters,system-masters")
	id, err := p.Identify(r)
	if err != nil || id.User != "System:admin" || !slices.Equal(id.Groups, []string{"systems:masters", "team-system:masters", "system-masters"}) {
		t.Fatalf("look-alike names: %+v, %v", id, err)
	}
}

// With a prefix the same header is harmless: system:masters becomes
// oidc:system:masters, a group Kubernetes gives no rights, and is accepted as
// such, as the API server's OIDC authenticator maps it with the same prefix.
func TestProxyPrefixMakesSystemNamesHarmless(t *testing.T) {
	p := &Proxy{UserHeader: "X-Forwarded-User", GroupsHeader: "X-Forwarded-Groups", SecretHeader: "X-Proxy-Secret",
		Secret: []byte(testProxySecret), UserPrefix: "oidc:", GroupsPrefix: "oidc:"}
	r := proxyRequest("127.0.0.1:40000", nil)
	r.Header.Set("X-Forwarded-User", "system:admin")
	r.Header.Set("X-Forwarded-Groups", "team,system:masters")
	r.Header.Add("X-Forwarded-Groups", "system:nodes")
	id, err := p.Identify(r)
	if err != nil || id.User != "oidc:system:admin" ||
		!slices.Equal(id.Groups, []string{"oidc:team", "oidc:system:masters", "oidc:system:nodes"}) {
		t.Fatalf("Identify = %+v, %v", id, err)
	}
	// The user prefix does not cover the groups: without a groups prefix a
	// system: group is still refused.
	p.GroupsPrefix = ""
	if _, err := p.Identify(r); !errors.Is(err, ErrReservedName) {
		t.Fatalf("a user prefix only: %v", err)
	}
}

// A prefix that does not keep names out of system: is refused when the
// console starts, not at the first request.
func TestProxyPrefixMustLeaveSystemNames(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		ok     bool
	}{
		{"", true},
		{"oidc:", true},
		{"https://issuer.example.com#", true},
		{"systemd:", true},
		{"system:", false},
		{"system:oidc:", false},
		{"system", false}, // "system" + ":masters"
		{"sys", false},    // "sys" + "tem:masters"
		{"s", false},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			for _, p := range []*Proxy{
				{UserHeader: "X-Forwarded-User", Secret: []byte(testProxySecret), UserPrefix: tc.prefix},
				{UserHeader: "X-Forwarded-User", Secret: []byte(testProxySecret), GroupsPrefix: tc.prefix},
			} {
				if err := p.Check(); (err == nil) != tc.ok {
					t.Fatalf("Check with prefix %q = %v, want ok=%v", tc.prefix, err, tc.ok)
				}
			}
		})
	}
	// Had such a prefix got through, the names would still be checked whole.
	p := &Proxy{UserHeader: "X-Forwarded-User", GroupsHeader: "X-Forwarded-Groups", SecretHeader: "X-Proxy-Secret",
		Secret: []byte(testProxySecret), GroupsPrefix: "sys"}
	r := proxyRequest("127.0.0.1:40000", nil)
	r.Header.Set("X-Forwarded-Groups", "tem:masters")
	if _, err := p.Identify(r); !errors.Is(err, ErrReservedName) {
		t.Fatalf("\"sys\" + \"tem:masters\": %v", err)
	}
}
