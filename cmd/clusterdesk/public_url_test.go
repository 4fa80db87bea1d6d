package main

import (
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// --public-url is read strictly: an absolute http(s) URL of a host, spelled
// as browsers send Origin; anything the console could not honour is refused
// with a message saying why.
func TestParsePublicURL(t *testing.T) {
	for _, tc := range []struct {
		raw, origin string
		https       bool
	}{
		{"", "", false},
		{"https://console.example.com", "https://console.example.com", true},
		{"https://console.example.com/", "https://console.example.com", true},
		{"HTTPS://Console.Example.COM", "https://console.example.com", true},
		{"https://console.example.com:443", "https://console.example.com", true},
		{"https://console.example.com:8443", "https://console.example.com:8443", true},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080", false},
		{"http://console.example.com:80/", "http://console.example.com", false},
		{"https://[::1]:8443", "https://[::1]:8443", true},
	} {
		p, err := parsePublicURL(tc.raw)
		if err != nil || p.origin != tc.origin || p.https != tc.https {
			t.Errorf("%q: origin %q https %v (%v), want %q %v", tc.raw, p.origin, p.https, err, tc.origin, tc.https)
		}
	}
	for _, tc := range []struct{ raw, why string }{
		{"console.example.com", "https://"},
		{"ftp://console.example.com", "https://"},
		{"//console.example.com", "https://"},
		{"https:console.example.com", "must name a host"},
		{"https://", "must name a host"},
		{"https://:8443", "must name a host"},
		{"https://admin:pw@console.example.com", "user or password"},
		{"https://console.example.com?x=1", "query"},
		{"https://console.example.com/?", "query"},
		{"https://console.example.com#top", "fragment"},
		{"https://console.example.com/#", "fragment"},
		{"https://example.com/clusterdesk", "path prefix (/clusterdesk) is not supported"},
		{"https://example.com/clusterdesk/", "path prefix"},
		{"https://example.com//", "path prefix"},
		{"https://bücher.example", "punycode"},
		{"https://console.example.com:port", "not a URL"},
	} {
		if p, err := parsePublicURL(tc.raw); err == nil || !strings.Contains(err.Error(), tc.why) || !strings.Contains(err.Error(), "--public-url") {
			t.Errorf("%q: %+v, %v; want an error about %q", tc.raw, p, err, tc.why)
		}
	}
}

// The flag and its environment variable reach buildSignIn: an https public
// URL makes the sessions Secure (so __Host- names) over a plain listener and
// gives the OIDC redirect URL; an http one with --tls-cert is refused;
// without it the listener decides as before.
func TestPublicURLDecidesCookieSecurity(t *testing.T) {
	restCfg := &rest.Config{Host: "https://127.0.0.1:1"}
	cfg, err := parseFlags([]string{"--auth", "token", "--public-url", "https://console.example.com"})
	if err != nil || cfg.signIn.precheck() != nil {
		t.Fatal(err)
	}
	si, err := buildSignIn(cfg.signIn, restCfg, nil, "admin")
	if err != nil || si.tls != nil || !si.sessions.Secure || si.sessions.Name() != "__Host-clusterdesk_session" {
		t.Fatalf("https public URL over plain HTTP: %+v, %v", si, err)
	}
	if got := si.public.base("http://0.0.0.0:8080"); got != "https://console.example.com" {
		t.Errorf("base URL %q", got)
	}
	if got := cfg.signIn.oidc.redirect(si.public.base("http://0.0.0.0:8080")); got != "https://console.example.com/login/oidc/callback" {
		t.Errorf("OIDC redirect default %q", got)
	}
	explicit := cfg.signIn.oidc
	explicit.redirectURL = "https://other.example.com/login/oidc/callback"
	if got := explicit.redirect("https://console.example.com"); got != explicit.redirectURL {
		t.Errorf("--oidc-redirect-url overridden: %q", got)
	}

	t.Setenv("CLUSTERDESK_PUBLIC_URL", "https://console.example.com/clusterdesk")
	cfg, err = parseFlags([]string{"--auth", "token"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.signIn.precheck(); err == nil || !strings.Contains(err.Error(), "path prefix") {
		t.Errorf("CLUSTERDESK_PUBLIC_URL with a path: precheck %v", err)
	}
	t.Setenv("CLUSTERDESK_PUBLIC_URL", "")

	dir := t.TempDir()
	cert, key := writeCert(t, dir)
	cfg, _ = parseFlags([]string{"--auth", "token", "--public-url", "http://console.example.com", "--tls-cert", cert, "--tls-key", key})
	if _, err := buildSignIn(cfg.signIn, restCfg, nil, "admin"); err == nil || !strings.Contains(err.Error(), "--tls-cert") {
		t.Errorf("http public URL with --tls-cert: %v, want it refused", err)
	}
	cfg, _ = parseFlags([]string{"--auth", "token", "--public-url", "http://127.0.0.1:8080"})
	if si, err := buildSignIn(cfg.signIn, restCfg, nil, "admin"); err != nil || si.sessions.Secure {
		t.Errorf("http public URL over plain HTTP: Secure %v, %v", si != nil && si.sessions.Secure, err)
	}
	cfg, _ = parseFlags([]string{"--auth", "token"})
	if si, err := buildSignIn(cfg.signIn, restCfg, nil, "admin"); err != nil || si.sessions.Secure || si.public.origin != "" || si.public.base("http://127.0.0.1:8080") != "http://127.0.0.1:8080" {
		t.Errorf("no public URL: Secure %v, %v", si != nil && si.sessions.Secure, err)
	}
}
