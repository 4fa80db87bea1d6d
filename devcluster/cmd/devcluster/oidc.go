package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/clusterdesk/clusterdesk/devcluster/internal/idp"
	"github.com/clusterdesk/clusterdesk/devcluster/internal/plane"
)

// startOIDC writes the provider's configuration, the details for its users
// (DIR/oidc/oidc.json) and kube-apiserver's authentication configuration,
// then starts the provider and waits until its discovery document is served.
func (c *cluster) startOIDC(ctx context.Context, opts upOptions, port int) error {
	began := time.Now()
	dir := filepath.Join(c.dir, "oidc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	clients := idp.Clients(opts.oidcLifetime)
	secrets, err := idp.EnsureSecrets(filepath.Join(c.dir, "pki", "oidc-secrets.json"), clients)
	if err != nil {
		return err
	}
	keys := c.layout.PKI
	files := idp.ProviderFiles{Cert: keys.OIDCCert, Key: keys.OIDCKey, SigningKey: keys.OIDCSigningKey}
	cfg := idp.NewProviderConfig(fmt.Sprintf("127.0.0.1:%d", port), files, clients, secrets)
	configPath := filepath.Join(dir, "provider.json")
	if err := cfg.Write(configPath); err != nil {
		return err
	}
	authn, err := idp.AuthenticationConfig(cfg.Issuer, c.caPEM, clients)
	if err != nil {
		return err
	}
	authnPath := filepath.Join(dir, "authentication-config.yaml")
	if err := os.WriteFile(authnPath, authn, 0o644); err != nil {
		return err
	}
	c.layout.AuthenticationConfig = authnPath
	details := filepath.Join(dir, "oidc.json")
	if err := idp.NewDetails(cfg.Issuer, keys.CACert, clients, secrets).Write(details); err != nil {
		return err
	}

	c.oidc = plane.OIDCProvider(c.layout, c.oidcBin, configPath)
	if err := c.oidc.Start(); err != nil {
		return err
	}
	if err := plane.WaitOIDCProvider(ctx, c.oidc, cfg.Issuer, c.caPEM, readyTimeout); err != nil {
		return err
	}
	c.oidcDetails = details
	fmt.Printf("devcluster: OpenID provider ready on %s after %s\n", cfg.Issuer, time.Since(began).Round(time.Millisecond))
	return nil
}
