package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// publicURL is --public-url: the address people open the console at, e.g.
// https://console.example.com behind a TLS-terminating Ingress. The console's
// own listener cannot tell that browsers reach it over https; this says so,
// and decides what the listener would otherwise: Secure and __Host- cookies,
// HSTS, the Origin forms must come from, and the OIDC redirect URL.
type publicURL struct {
	// origin is scheme://host[:port] as a browser's Origin header spells it
	// (lower case, no default port); "" without --public-url.
	origin string
	https  bool
}

func registerPublicURL(fs *flag.FlagSet, raw *string) {
	fs.StringVar(raw, "public-url", env("PUBLIC_URL", ""), "the URL people open the console at, e.g. https://console.example.com behind a TLS-terminating Ingress: an https one makes every cookie Secure and __Host-, sends HSTS, and forms are accepted only from its origin; the default of --oidc-redirect-url. Default: the address served on")
}

// parsePublicURL checks --public-url strictly: an absolute http or https URL
// of a host and optional port, nothing else. The console serves at the root
// of its host (its links and its __Host- cookies, which must have Path=/,
// assume it), so a path is refused rather than half-supported.
func parsePublicURL(raw string) (publicURL, error) {
	if raw == "" {
		return publicURL{}, nil
	}
	fail := func(why string) (publicURL, error) {
		return publicURL{}, fmt.Errorf("--public-url %q: %s", raw, why)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fail("not a URL: " + err.Error())
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return fail("must start with https:// (or http://), e.g. https://console.example.com")
	case u.Opaque != "" || u.Host == "":
		return fail("must name a host, e.g. https://console.example.com")
	case u.User != nil:
		return fail("must not carry a user or password")
	case u.RawQuery != "" || u.ForceQuery:
		return fail("must not have a query")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return fail("must not have a fragment")
	case u.Path != "" && u.Path != "/":
		return fail("clusterdesk serves at the root of its host; a path prefix (" + u.Path + ") is not supported: give it a host of its own, e.g. https://clusterdesk.example.com")
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return fail("must name a host, e.g. https://console.example.com")
	}
	for _, r := range host {
		if r > 0x7e {
			return fail("write the host in its ASCII (punycode) form, as browsers send it in Origin")
		}
	}
	host = strings.ToLower(host)
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = "" // browsers leave the default port out of Origin
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 literal
	}
	origin := scheme + "://" + host
	if port != "" {
		origin = scheme + "://" + net.JoinHostPort(strings.Trim(host, "[]"), port)
	}
	return publicURL{origin: origin, https: scheme == "https"}, nil
}

// checkTLS refuses an http public URL on a console that serves TLS
// itself: browsers would be told two different schemes.
func (p publicURL) checkTLS(servesTLS bool) error {
	if p.origin != "" && !p.https && servesTLS {
		return errors.New("--public-url is http:// but --tls-cert serves https: give the https URL people open")
	}
	return nil
}

// base is the console's base URL as people open it: the public URL, else
// served (the listener's address).
func (p publicURL) base(served string) string {
	if p.origin != "" {
		return p.origin
	}
	return served
}
