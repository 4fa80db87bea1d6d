package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/handlers"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/metrics"
)

// signInConfig is how people sign in (--auth and the proxy's trust) and
// whether the console serves TLS.
type signInConfig struct {
	mode              string
	proxyUserHeader   string
	proxyGroupsHeader string
	proxySecretHeader string
	proxySecretFile   string
	proxyClientCA     string
	tlsCert, tlsKey   string
	oidc              oidcConfig // --auth oidc (oidc.go)
}

func (s *signInConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&s.mode, "auth", env("AUTH", string(auth.ModeLocal)), "sign-in mode: local (one-time login URL, the kubeconfig's identity), token (users paste a bearer token), proxy (an authenticating proxy names the user, who is impersonated) or oidc (users sign in at an OpenID provider; the console acts with their ID token)")
	s.oidc.register(fs)
	fs.StringVar(&s.proxyUserHeader, "proxy-user-header", env("PROXY_USER_HEADER", auth.DefaultProxyUserHeader), "proxy mode: the header naming the user")
	fs.StringVar(&s.proxyGroupsHeader, "proxy-groups-header", env("PROXY_GROUPS_HEADER", auth.DefaultProxyGroupsHeader), "proxy mode: the header listing the user's groups (comma-separated, may repeat)")
	fs.StringVar(&s.proxySecretHeader, "proxy-secret-header", env("PROXY_SECRET_HEADER", auth.DefaultProxySecretHeader), "proxy mode: the header carrying the shared secret")
	fs.StringVar(&s.proxySecretFile, "proxy-secret-file", env("PROXY_SECRET_FILE", ""), "proxy mode: a file holding the shared secret the proxy sends (or set CLUSTERDESK_PROXY_SECRET)")
	fs.StringVar(&s.proxyClientCA, "proxy-client-ca", env("PROXY_CLIENT_CA", ""), "proxy mode: PEM file of the CA that signs the proxy's TLS client certificate (needs --tls-cert)")
	fs.StringVar(&s.tlsCert, "tls-cert", env("TLS_CERT", ""), "serve HTTPS with this PEM certificate (with --tls-key)")
	fs.StringVar(&s.tlsKey, "tls-key", env("TLS_KEY", ""), "the PEM private key of --tls-cert")
}

// precheck refuses settings that cannot work before the console connects to
// anything: an unknown mode, proxy mode without a trust setting. buildSignIn
// checks the rest (files, certificates).
func (s signInConfig) precheck() error {
	mode, err := auth.ParseMode(s.mode)
	if err != nil {
		return fmt.Errorf("--auth: %w", err)
	}
	if mode == auth.ModeProxy && s.proxySecretFile == "" && os.Getenv("CLUSTERDESK_PROXY_SECRET") == "" && s.proxyClientCA == "" {
		return fmt.Errorf("--auth proxy: %w (set --proxy-secret-file or CLUSTERDESK_PROXY_SECRET, or --proxy-client-ca with --tls-cert)", auth.ErrNoTrust)
	}
	if mode == auth.ModeOIDC {
		return s.oidc.precheck()
	}
	return nil
}

// signIn is everything the chosen mode builds.
type signIn struct {
	mode     auth.Mode
	gate     *auth.Gate
	sessions *auth.Sessions
	users    *kube.Users
	tls      *tls.Config // nil: plain HTTP
	review   handlers.TokenReviewer
}

// buildSignIn checks the settings and builds the gate, the per-user clients
// and the TLS config. Proxy mode without a trust setting is refused here.
func buildSignIn(s signInConfig, restCfg *rest.Config, reg *metrics.Registry, localUser string) (*signIn, error) {
	mode, err := auth.ParseMode(s.mode)
	if err != nil {
		return nil, fmt.Errorf("--auth: %w", err)
	}
	out := &signIn{mode: mode, sessions: auth.NewSessions()}
	if (s.tlsCert == "") != (s.tlsKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	if s.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(s.tlsCert, s.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		out.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		out.sessions.Secure = true
	}

	out.gate = &auth.Gate{Mode: mode, Sessions: out.sessions, LocalUser: localUser}
	switch mode {
	case auth.ModeOIDC:
		// The relying party comes with the served address (configureOIDC, oidc.go).
		out.gate.Store = auth.NewStore(0)
		out.gate.Store.Idle = out.sessions.Idle
		out.review = func(ctx context.Context, token string) (kube.Identity, error) {
			return kube.Review(ctx, restCfg, token)
		}
	case auth.ModeToken:
		out.gate.Store = auth.NewStore(0)
		out.gate.Store.Idle = out.sessions.Idle
		out.review = func(ctx context.Context, token string) (kube.Identity, error) {
			return kube.Review(ctx, restCfg, token)
		}
		// A revoked or expired token ends its session within 5 minutes.
		out.gate.Recheck = func(ctx context.Context, token string) error {
			_, err := kube.Review(ctx, restCfg, token)
			return err
		}
		out.gate.RecheckEvery = 5 * time.Minute
	case auth.ModeProxy:
		p := &auth.Proxy{UserHeader: s.proxyUserHeader, GroupsHeader: s.proxyGroupsHeader, SecretHeader: s.proxySecretHeader}
		if p.Secret, err = proxySecret(s.proxySecretFile); err != nil {
			return nil, err
		}
		if s.proxyClientCA != "" {
			if out.tls == nil {
				return nil, errors.New("--proxy-client-ca needs --tls-cert and --tls-key: the proxy's certificate is checked in the TLS handshake")
			}
			pem, err := os.ReadFile(s.proxyClientCA)
			if err != nil {
				return nil, fmt.Errorf("--proxy-client-ca: %w", err)
			}
			p.ClientCAs = x509.NewCertPool()
			if !p.ClientCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--proxy-client-ca %s: no PEM certificate in it", s.proxyClientCA)
			}
			out.tls.ClientCAs = p.ClientCAs
			out.tls.ClientAuth = tls.VerifyClientCertIfGiven
		}
		out.gate.Proxy = p
		out.gate.Sessions = nil
	}
	if err := out.gate.Check(); err != nil && mode != auth.ModeOIDC {
		return nil, fmt.Errorf("--auth %s: %w (set --proxy-secret-file or CLUSTERDESK_PROXY_SECRET, or --proxy-client-ca with --tls-cert)", mode, err)
	}

	if out.users, err = kube.NewUsers(restCfg, 0); err != nil {
		return nil, err
	}
	// Outside local mode the console never acts as itself for a person.
	out.users.Strict = mode != auth.ModeLocal
	hits := reg.NewCounterVec("access", "review_cache_total",
		"Access questions (SelfSubjectAccessReview or SubjectAccessReview) by result: hit (answered from the 30 s cache) or miss (asked the API server).", "result")
	hit, miss := hits.WithLabelValues("hit"), hits.WithLabelValues("miss")
	out.users.ObserveAccess(func(h bool) {
		if h {
			hit.Inc()
		} else {
			miss.Inc()
		}
	})
	return out, nil
}

// proxySecret reads the shared secret from file, else from CLUSTERDESK_PROXY_SECRET
// (never from a flag: command lines are visible to every user of the machine).
func proxySecret(file string) ([]byte, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--proxy-secret-file: %w", err)
		}
		b = bytes.TrimSpace(b)
		if len(b) < 16 {
			return nil, fmt.Errorf("--proxy-secret-file %s: the secret must be at least 16 bytes", file)
		}
		return b, nil
	}
	if v := os.Getenv("CLUSTERDESK_PROXY_SECRET"); v != "" {
		if len(v) < 16 {
			return nil, errors.New("CLUSTERDESK_PROXY_SECRET must be at least 16 bytes")
		}
		return []byte(v), nil
	}
	return nil, nil
}

// listen opens the console's listener, TLS when configured.
func (s *signIn) listen(addr string) (net.Listener, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("--listen %s: %w", addr, err)
	}
	if s.tls == nil {
		return ln, "http://" + ln.Addr().String(), nil
	}
	return tls.NewListener(ln, s.tls), "https://" + ln.Addr().String(), nil
}
