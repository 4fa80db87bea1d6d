package handlers

import "strings"

// secureBehindPublicURL makes every cookie Secure and __Host- (auth.Sessions
// .Secure) when the public URL is https, whatever the listener: behind a
// TLS-terminating Ingress browsers use https though the console serves plain
// HTTP. The __Host- names are also what keeps a sibling subdomain's cookies
// out: a browser stores a __Host- cookie only from the host itself, over
// https, without Domain (RFC 6265bis §4.1.3.2), so a clusterdesk_session
// that evil.example.com set for Domain=example.com is not read at all.
func secureBehindPublicURL(deps Deps) {
	if !strings.HasPrefix(deps.PublicOrigin, "https://") {
		return
	}
	if deps.Sessions != nil {
		deps.Sessions.Secure = true
	}
	if deps.Gate != nil && deps.Gate.Sessions != nil {
		deps.Gate.Sessions.Secure = true
	}
}
