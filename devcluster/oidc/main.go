// Command devcluster-oidc is the OpenID provider of a devcluster: zitadel's
// op package (github.com/zitadel/oidc/v3/pkg/op) over static users and
// clients from a JSON file, serving HTTPS on loopback, so the console's OIDC
// sign-in and oauth2-proxy meet a real provider and kube-apiserver trusts the
// same issuer.
//
//	devcluster-oidc --config DIR/oidc/provider.json
//
// It is its own module so that zitadel's dependencies never change the
// versions kube-apiserver is built with in the devcluster module.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

func main() {
	configPath := flag.String("config", "", "provider configuration (JSON), written by devcluster")
	flag.Parse()
	if *configPath == "" {
		fmt.Fprintln(os.Stderr, "devcluster-oidc: --config is required")
		os.Exit(2)
	}
	if err := run(*configPath); err != nil {
		fmt.Fprintln(os.Stderr, "devcluster-oidc:", err)
		os.Exit(1)
	}
}

func run(configPath string) error {
	cfg, err := LoadConfig(configPath)
	if err != nil {
		return err
	}
	handler, err := NewHandler(cfg)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Addr:              cfg.Listen,
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServeTLS(cfg.TLSCertFile, cfg.TLSKeyFile) }()
	slog.Info("serving", "issuer", cfg.Issuer, "listen", cfg.Listen, "users", len(cfg.Users), "clients", len(cfg.Clients))
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// NewHandler is the whole provider: discovery, authorize, token, userinfo,
// keys, revocation, end_session (zitadel's op) and the login page.
func NewHandler(cfg *Config) (http.Handler, error) {
	s, err := newStorage(cfg)
	if err != nil {
		return nil, err
	}
	// CryptoKey encrypts what op hands out opaquely (codes, access tokens);
	// a fresh one per start is right because those live in memory too.
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return nil, err
	}
	opConfig := &op.Config{
		CryptoKey:             key,
		CodeMethodS256:        true, // PKCE
		AuthMethodPost:        true, // client_secret_post as well as _basic
		GrantTypeRefreshToken: true,
		SupportedUILocales:    []language.Tag{language.English},
		SupportedScopes:       []string{"openid", "profile", "email", "offline_access", ScopeGroups},
		SupportedClaims:       append(op.DefaultSupportedClaims, "groups"),
	}
	provider, err := op.NewProvider(opConfig, s, op.StaticIssuer(cfg.Issuer), op.WithLogger(slog.Default()))
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(loginPath, newLogin(s, provider))
	mux.Handle("/", provider)
	return mux, nil
}
