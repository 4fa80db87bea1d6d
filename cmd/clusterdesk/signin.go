package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
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
	proxyClientCN     string // comma-separated
	proxyUserPrefix   string
	proxyGroupsPrefix string
	tlsCert, tlsKey   string
	oidc              oidcConfig // --auth oidc (oidc.go)
	// sessionKeys seals session cookies and signs CSRF tokens, shared by replicas.
	sessionKeys string
	// namespace is the console's own, where replicas share sign-outs.
	namespace string
	// inClusterDir is --in-cluster-dir (main.go): the pod's service-account
	// files, whose namespace file is the default of namespace.
	inClusterDir string
	// publicURL is --public-url, the address people open (public_url.go).
	publicURL string
}

func (s *signInConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&s.mode, "auth", env("AUTH", string(auth.ModeLocal)), "sign-in mode: local (one-time login URL, the kubeconfig's identity), token (users paste a bearer token), proxy (an authenticating proxy names the user, who is impersonated) or oidc (users sign in at an OpenID provider; the console acts with their ID token)")
	s.oidc.register(fs)
	fs.StringVar(&s.proxyUserHeader, "proxy-user-header", env("PROXY_USER_HEADER", auth.DefaultProxyUserHeader), "proxy mode: the header naming the user")
	fs.StringVar(&s.proxyGroupsHeader, "proxy-groups-header", env("PROXY_GROUPS_HEADER", auth.DefaultProxyGroupsHeader), "proxy mode: the header listing the user's groups: one line per group (as oauth2-proxy v7 sends them) and/or groups joined by commas; every line is split at its commas, so a group name cannot hold a comma")
	fs.StringVar(&s.proxySecretHeader, "proxy-secret-header", env("PROXY_SECRET_HEADER", auth.DefaultProxySecretHeader), "proxy mode: the header carrying the shared secret")
	fs.StringVar(&s.proxySecretFile, "proxy-secret-file", env("PROXY_SECRET_FILE", ""), "proxy mode: a file holding the shared secret the proxy sends (or set CLUSTERDESK_PROXY_SECRET)")
	fs.StringVar(&s.proxyClientCA, "proxy-client-ca", env("PROXY_CLIENT_CA", ""), "proxy mode: PEM file of the CA that signs the proxy's TLS client certificate (needs --tls-cert and --proxy-client-cn)")
	fs.StringVar(&s.proxyClientCN, "proxy-client-cn", env("PROXY_CLIENT_CN", ""), "proxy mode with --proxy-client-ca: the common name(s) the proxy's client certificate must carry (comma-separated); other certificates from that CA are refused")
	fs.StringVar(&s.proxyUserPrefix, "proxy-user-prefix", env("PROXY_USER_PREFIX", ""), "proxy mode: prefix put before the user the proxy names, as the API server prefixes the same people's OIDC usernames (e.g. oidc:). Without one, a user named system:... is refused (403); the prefix itself may not start with system:")
	fs.StringVar(&s.proxyGroupsPrefix, "proxy-groups-prefix", env("PROXY_GROUPS_PREFIX", ""), "proxy mode: prefix put before each group the proxy names, as the API server prefixes OIDC groups (e.g. oidc:). Without one, a request naming a group system:... (such as system:masters) is refused (403); the prefix itself may not start with system:")
	fs.StringVar(&s.tlsCert, "tls-cert", env("TLS_CERT", ""), "serve HTTPS with this PEM certificate (with --tls-key)")
	fs.StringVar(&s.tlsKey, "tls-key", env("TLS_KEY", ""), "the PEM private key of --tls-cert")
	fs.StringVar(&s.sessionKeys, "session-keys", env("SESSION_KEYS", ""), "token, oidc and proxy mode: a file, or a directory such as a mounted Secret, of base64 keys (one per line, 32+ random bytes each) that seal session cookies and sign forms, shared by the console's replicas; the first key seals, every key opens (rotation). Default: a random key per process (a restart signs everyone out)")
	registerPublicURL(fs, &s.publicURL)
	fs.StringVar(&s.namespace, "namespace", env("NAMESPACE", ""), "the console's own namespace, where replicas with --session-keys share sign-outs as Leases (default: the pod's namespace)")
}

// precheck refuses settings that cannot work before the console connects to
// anything: an unknown mode, proxy mode without a trust setting. buildSignIn
// checks the rest (files, certificates).
func (s signInConfig) precheck() error {
	mode, err := auth.ParseMode(s.mode)
	if err != nil {
		return fmt.Errorf("--auth: %w", err)
	}
	if _, err := parsePublicURL(s.publicURL); err != nil {
		return err
	}
	if mode == auth.ModeLocal && s.sessionKeys != "" {
		return errors.New("--session-keys is for replicas in token, oidc or proxy mode: local mode is one process, whose sign-in URL only it knows")
	}
	if mode == auth.ModeProxy && s.proxySecretFile == "" && os.Getenv("CLUSTERDESK_PROXY_SECRET") == "" && s.proxyClientCA == "" {
		return fmt.Errorf("--auth proxy: %w (set --proxy-secret-file or CLUSTERDESK_PROXY_SECRET, or --proxy-client-ca with --tls-cert)", auth.ErrNoTrust)
	}
	if mode == auth.ModeProxy {
		if err := s.checkProxyPrefixes(); err != nil {
			return err
		}
	}
	if mode == auth.ModeOIDC {
		return s.oidc.precheck()
	}
	return nil
}

// checkProxyPrefixes refuses a prefix in system:, which would impersonate
// every user or group as one of Kubernetes' own (auth/proxy_names.go).
func (s signInConfig) checkProxyPrefixes() error {
	if err := auth.CheckPrefix("--proxy-user-prefix", s.proxyUserPrefix); err != nil {
		return err
	}
	return auth.CheckPrefix("--proxy-groups-prefix", s.proxyGroupsPrefix)
}

// signIn is everything the chosen mode builds.
type signIn struct {
	mode     auth.Mode
	gate     *auth.Gate
	sessions *auth.Sessions
	// revocations, with --session-keys in token and oidc mode: sign-outs shared by
	// the replicas through the cluster (startRevocations).
	revocations *kube.Revocations
	revoker     *auth.SharedRevoker
	users       *kube.Users
	tls         *tls.Config // nil: plain HTTP
	// public is --public-url: it, not the listener, decides cookie security.
	public publicURL
	review handlers.TokenReviewer
}

// buildSignIn checks the settings and builds the gate, the per-user clients
// and the TLS config. Proxy mode without a trust setting is refused here.
func buildSignIn(s signInConfig, restCfg *rest.Config, reg *metrics.Registry, localUser string) (*signIn, error) {
	mode, err := auth.ParseMode(s.mode)
	if err != nil {
		return nil, fmt.Errorf("--auth: %w", err)
	}
	out := &signIn{mode: mode, sessions: auth.NewSessions()}
	if s.sessionKeys != "" {
		keys, err := auth.LoadKeys(s.sessionKeys)
		if err != nil {
			return nil, fmt.Errorf("--session-keys: %w", err)
		}
		out.sessions = auth.NewSessionsWithKeys(keys)
	}
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
	// Behind a TLS-terminating proxy the listener is plain HTTP but browsers
	// use https: the public URL says so (public_url.go).
	if out.public, err = parsePublicURL(s.publicURL); err != nil {
		return nil, err
	}
	if err := out.public.checkTLS(out.tls != nil); err != nil {
		return nil, err
	}
	if out.public.https {
		out.sessions.Secure = true
	}

	out.gate = &auth.Gate{Mode: mode, Sessions: out.sessions, LocalUser: localUser}
	switch mode {
	case auth.ModeOIDC:
		// The relying party comes with the served address (configureOIDC,
		// oidc.go); sign-outs are shared like token mode's.
		if err := out.shareSignOuts(s, restCfg); err != nil {
			return nil, err
		}
		out.review = func(ctx context.Context, token string) (kube.Identity, error) {
			return kube.Review(ctx, restCfg, token)
		}
	case auth.ModeToken:
		if err := out.shareSignOuts(s, restCfg); err != nil {
			return nil, err
		}
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
		if err := s.checkProxyPrefixes(); err != nil {
			return nil, err
		}
		p := &auth.Proxy{UserHeader: s.proxyUserHeader, GroupsHeader: s.proxyGroupsHeader, SecretHeader: s.proxySecretHeader,
			UserPrefix: s.proxyUserPrefix, GroupsPrefix: s.proxyGroupsPrefix}
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
			for _, cn := range strings.Split(s.proxyClientCN, ",") {
				if cn = strings.TrimSpace(cn); cn != "" {
					p.ClientNames = append(p.ClientNames, cn)
				}
			}
			if len(p.ClientNames) == 0 {
				return nil, fmt.Errorf("--proxy-client-ca needs --proxy-client-cn: %w (any certificate the CA signs would do)", auth.ErrNoClientNames)
			}
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

// shareSignOuts, with --session-keys (replicas), keeps sign-outs in the
// cluster so that one on any replica holds on all (a Lease each).
func (out *signIn) shareSignOuts(s signInConfig, restCfg *rest.Config) error {
	if s.sessionKeys == "" {
		return nil
	}
	ns := s.namespace
	if ns == "" {
		ns = podNamespace(s.inClusterDir)
	}
	if ns == "" {
		return fmt.Errorf("--session-keys in %s mode: replicas share sign-outs as Leases in the console's namespace; set --namespace", out.mode)
	}
	var err error
	if out.revocations, err = kube.NewRevocations(restCfg, ns); err != nil {
		return err
	}
	out.revoker = auth.NewSharedRevoker(out.revocations, out.sessions.Absolute)
	out.sessions.Revocations = out.revoker
	return nil
}

// podNamespace is the namespace of the pod the console runs in, from the
// service-account files in dir (--in-cluster-dir, as the token and CA are
// read, and as `clusterdesk approver` reads it), "" outside one (a variable:
// tests run where a pod's files may exist).
var podNamespace = readPodNamespace

func readPodNamespace(dir string) string {
	if dir == "" {
		dir = kube.ServiceAccountDir
	}
	b, err := os.ReadFile(filepath.Join(dir, "namespace"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// startRevocations watches the shared sign-outs (with --session-keys in token
// and oidc mode), beats the heartbeat that tells how current the watch is and
// deletes expired sign-outs, until ctx ends. Sessions are refused, and
// /readyz fails, until the watch has listed them and whenever it falls more
// than auth.DefaultMaxLag behind (auth.ErrNotReady, SharedRevoker's "When
// the watch is behind").
func (s *signIn) startRevocations(ctx context.Context, log *slog.Logger) error {
	if s.revoker == nil {
		return nil
	}
	s.revoker.Log = log
	synced, err := s.revocations.Watch(ctx, s.revoker)
	if err != nil {
		return err
	}
	s.revoker.SetReady(synced)
	go s.revoker.Run(ctx)
	log.Info("sign-outs shared through Leases", "namespace", s.revocations.Namespace())
	return nil
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

// listen opens the console's listener, TLS when configured. In proxy mode
// with a shared secret it refuses an address where the secret could only
// arrive in clear (auth.Proxy.CheckListener).
func (s *signIn) listen(addr string) (net.Listener, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("--listen %s: %w", addr, err)
	}
	if s.gate != nil && s.gate.Proxy != nil {
		if err := s.gate.Proxy.CheckListener(ln.Addr(), s.tls != nil); err != nil {
			ln.Close()
			return nil, "", fmt.Errorf("--listen %s: %w", addr, err)
		}
	}
	if s.tls == nil {
		return ln, "http://" + ln.Addr().String(), nil
	}
	return tls.NewListener(ln, s.tls), "https://" + ln.Addr().String(), nil
}
