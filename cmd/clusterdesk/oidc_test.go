package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/auth"
)

func TestOIDCFlags(t *testing.T) {
	t.Setenv("CLUSTERDESK_OIDC_CLIENT_SECRET", "")
	cfg, err := parseFlags([]string{"--auth", "oidc"})
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.signIn.precheck()
	for _, flag := range []string{"--oidc-issuer-url", "--oidc-client-id", "--oidc-client-secret-file"} {
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("precheck without settings: %v, want it to name %s", err, flag)
		}
	}

	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("the-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := writeCert(t, dir)
	cfg, err = parseFlags([]string{"--auth", "oidc", "--oidc-issuer-url", "https://127.0.0.1:1", "--oidc-client-id", "clusterdesk",
		"--oidc-client-secret-file", secret, "--oidc-ca-file", cert, "--oidc-scopes", "openid, groups,offline_access", "--oidc-groups-claim", "roles"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.signIn.precheck(); err != nil {
		t.Fatalf("precheck: %v", err)
	}
	si, err := buildSignIn(cfg.signIn, &rest.Config{Host: "https://127.0.0.1:1"}, nil, "admin")
	if err != nil || si.gate.Sessions == nil || si.review == nil || !si.users.Strict {
		t.Fatalf("oidc mode: %+v, %v", si, err)
	}
	if err := si.configureOIDC(cfg.signIn.oidc, "http://127.0.0.1:8080"); err != nil {
		t.Fatalf("configureOIDC: %v", err)
	}
	if si.gate.OIDC == nil || si.gate.Mode != auth.ModeOIDC || si.gate.Check() != nil {
		t.Fatal("the gate has no relying party")
	}

	bad := cfg.signIn.oidc
	bad.caFile = secret
	if err := si.configureOIDC(bad, "http://127.0.0.1:8080"); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a CA file without a certificate: %v", err)
	}
	bad = cfg.signIn.oidc
	bad.issuer = "http://idp.example"
	if err := si.configureOIDC(bad, "http://127.0.0.1:8080"); err == nil || !strings.Contains(err.Error(), "https") {
		t.Errorf("a plain-http issuer off loopback: %v", err)
	}
}
