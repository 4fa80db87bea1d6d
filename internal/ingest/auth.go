package ingest

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"net/http"
	"strings"
)

// Senders says who may post audit events: the API server, proved by a
// client certificate from ClientCAs (mutual TLS) and/or a bearer token.
// Every check configured must pass.
//
// Mutual TLS is the one the devcluster and the README use: the API server's
// webhook kubeconfig holds a client certificate as naturally as a token, the
// proof is bound to the connection (a token can be replayed by whoever reads
// it: a log, a proxy), and nothing secret sits in the console's files but its
// own serving key. The token is there for a deployment whose API server
// cannot be given a certificate from a CA of the console's choosing (a
// managed control plane that takes a kubeconfig with a token only).
type Senders struct {
	// ClientCAs verifies the client certificate; use a CA that signs the
	// API server's webhook client certificate only, never the cluster CA,
	// which signs every approved CSR. Nil: no certificate asked for.
	ClientCAs *x509.CertPool
	// Token is the bearer token the API server sends; empty: none asked for.
	Token string
	// TokenFile holds the bearer tokens the API server may send, read again
	// when it changes (a rotation without a restart); nil: none asked for.
	TokenFile *TokenFile
}

// configured tells whether any sender check is set: a receiver without one
// would store whatever anybody posts.
func (s Senders) configured() bool {
	return s.ClientCAs != nil || s.Token != "" || s.TokenFile != nil
}

// authenticated checks r against every configured check. The certificate is
// verified here, not in the TLS handshake (tls.RequestClientCert): a
// handshake refusal reaches the sender as a reset connection, which it
// retries as if the console were down, where a 401 says what is wrong and is
// counted.
func (s Senders) authenticated(r *http.Request) bool {
	if s.ClientCAs != nil && !s.verifiedCert(r) {
		return false
	}
	if s.Token != "" && !s.tokenMatches(r.Header.Get("Authorization")) {
		return false
	}
	if s.TokenFile != nil {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !s.TokenFile.matches(got) {
			return false
		}
	}
	return s.configured()
}

func (s Senders) verifiedCert(r *http.Request) bool {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return false
	}
	chain := r.TLS.PeerCertificates
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{
		Roots: s.ClientCAs, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	return err == nil
}

// tokenMatches compares digests in constant time, so neither the token's
// bytes nor its length leak through the time a refusal takes.
func (s Senders) tokenMatches(header string) bool {
	got, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return false
	}
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(s.Token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
