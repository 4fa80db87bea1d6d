package idp

import "sigs.k8s.io/yaml"

// The types below are the part of kube-apiserver's AuthenticationConfiguration
// (apiserver.config.k8s.io/v1) that devcluster writes, as declared upstream in
// kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/apis/apiserver/v1/types.go.
// They are copied instead of imported so this module's go.mod, which pins
// kube-apiserver's build, stays as it is; a test decodes the output strictly
// with the upstream types.
type authenticationConfiguration struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	JWT        []jwtAuthenticator `json:"jwt"`
}

type jwtAuthenticator struct {
	Issuer        issuer        `json:"issuer"`
	ClaimMappings claimMappings `json:"claimMappings"`
}

type issuer struct {
	URL                  string   `json:"url"`
	CertificateAuthority string   `json:"certificateAuthority"`
	Audiences            []string `json:"audiences"`
	AudienceMatchPolicy  string   `json:"audienceMatchPolicy,omitempty"`
}

type claimMappings struct {
	Username prefixedClaim `json:"username"`
	Groups   prefixedClaim `json:"groups"`
}

type prefixedClaim struct {
	Claim  string  `json:"claim"`
	Prefix *string `json:"prefix"` // required for username when claim is set, even if empty
}

// AuthenticationConfig is the --authentication-config file that makes
// kube-apiserver accept ID tokens of the provider at issuerURL, signed by a
// key from its discovery document fetched over TLS verified with caPEM. The
// username is the sub claim and the groups the groups claim, both with Prefix.
// Token-file users and client certificates keep working: JWT authenticators
// are added to the others, and --authentication-config only excludes the
// --oidc-* flags.
func AuthenticationConfig(issuerURL string, caPEM []byte, clients []Client) ([]byte, error) {
	var audiences []string
	for _, c := range clients {
		if c.Trusted {
			audiences = append(audiences, c.ID)
		}
	}
	policy := ""
	if len(audiences) > 1 {
		policy = "MatchAny" // required with more than one audience
	}
	prefix := Prefix
	cfg := authenticationConfiguration{
		APIVersion: "apiserver.config.k8s.io/v1",
		Kind:       "AuthenticationConfiguration",
		JWT: []jwtAuthenticator{{
			Issuer: issuer{
				URL:                  issuerURL,
				CertificateAuthority: string(caPEM),
				Audiences:            audiences,
				AudienceMatchPolicy:  policy,
			},
			ClaimMappings: claimMappings{
				Username: prefixedClaim{Claim: "sub", Prefix: &prefix},
				Groups:   prefixedClaim{Claim: "groups", Prefix: &prefix},
			},
		}},
	}
	return yaml.Marshal(cfg)
}
