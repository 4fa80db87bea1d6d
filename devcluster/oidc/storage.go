package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

const (
	// authRequestTTL bounds how long an abandoned sign-in is kept.
	authRequestTTL    = 10 * time.Minute
	refreshTokenTTL   = 24 * time.Hour
	errUnknownRequest = "unknown or expired sign-in request"
)

// errWrongPassword is what the login form shows for any failed attempt, so it
// does not tell which usernames exist.
var errWrongPassword = errors.New("wrong username or password")

// storage is zitadel's op.Storage over the static users and clients of the
// configuration, with sign-ins and tokens in memory: a restart of the
// provider ends every session, while ID tokens already issued stay valid
// because the signing key comes from a file.
type storage struct {
	users   map[string]User
	clients map[string]*client
	key     signingKey

	mu            sync.Mutex
	authRequests  map[string]*authRequest
	codes         map[string]string // code → auth request id
	accessTokens  map[string]accessToken
	refreshTokens map[string]*refreshToken
}

type accessToken struct {
	clientID, userID string
	scopes           []string
	expiration       time.Time
}

var (
	_ op.Storage                   = (*storage)(nil)
	_ op.CanSetUserinfoFromRequest = (*storage)(nil)
)

func newStorage(cfg *Config) (*storage, error) {
	key, err := loadSigningKey(cfg.SigningKeyFile)
	if err != nil {
		return nil, err
	}
	s := &storage{
		users:         map[string]User{},
		clients:       map[string]*client{},
		key:           key,
		authRequests:  map[string]*authRequest{},
		codes:         map[string]string{},
		accessTokens:  map[string]accessToken{},
		refreshTokens: map[string]*refreshToken{},
	}
	for _, u := range cfg.Users {
		s.users[u.Username] = u
	}
	for _, c := range cfg.Clients {
		lifetime, err := c.idTokenLifetime()
		if err != nil {
			return nil, err
		}
		s.clients[c.ID] = &client{Client: c, lifetime: lifetime}
	}
	return s, nil
}

// checkPassword completes the sign-in id as username if the password is right.
func (s *storage) checkPassword(id, username, password string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	req, ok := s.authRequests[id]
	if !ok {
		return errors.New(errUnknownRequest)
	}
	u, ok := s.users[username]
	if !ok || !constantTimeEqual(u.Password, password) {
		return errWrongPassword
	}
	req.userID = u.Username
	req.authTime = time.Now()
	req.done = true
	return nil
}

func (s *storage) CreateAuthRequest(_ context.Context, r *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	if len(r.Prompt) == 1 && r.Prompt[0] == oidc.PromptNone {
		// There is no provider-side session to sign in silently with.
		return nil, oidc.ErrLoginRequired()
	}
	id, err := randomID()
	if err != nil {
		return nil, err
	}
	req := newAuthRequest(id, r)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(time.Now())
	s.authRequests[id] = req
	return req, nil
}

// pruneLocked drops abandoned sign-ins and expired tokens, so memory stays
// bounded however many sign-ins tests start and never finish.
func (s *storage) pruneLocked(now time.Time) {
	for id, r := range s.authRequests {
		if now.Sub(r.created) > authRequestTTL {
			delete(s.authRequests, id)
		}
	}
	for code, id := range s.codes {
		if _, ok := s.authRequests[id]; !ok {
			delete(s.codes, code)
		}
	}
	for id, t := range s.accessTokens {
		if now.After(t.expiration) {
			delete(s.accessTokens, id)
		}
	}
	for id, t := range s.refreshTokens {
		if now.After(t.expiration) {
			delete(s.refreshTokens, id)
		}
	}
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req, ok := s.authRequests[id]
	if !ok {
		return nil, errors.New(errUnknownRequest)
	}
	return req, nil
}

func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	id, ok := s.codes[code]
	s.mu.Unlock()
	if !ok {
		return nil, errors.New("code invalid or already used")
	}
	return s.AuthRequestByID(ctx, id)
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest is called once the code was exchanged: the code is then
// gone, so a replayed code is refused.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.authRequests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

func (s *storage) CreateAccessToken(_ context.Context, r op.TokenRequest) (string, time.Time, error) {
	clientID := ""
	if a, ok := r.(*authRequest); ok {
		clientID = a.clientID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id, exp, err := s.newAccessTokenLocked(clientID, r.GetSubject(), r.GetScopes())
	return id, exp, err
}

func (s *storage) newAccessTokenLocked(clientID, userID string, scopes []string) (string, time.Time, error) {
	id, err := randomID()
	if err != nil {
		return "", time.Time{}, err
	}
	lifetime := time.Hour
	if c, ok := s.clients[clientID]; ok {
		lifetime = c.lifetime
	}
	exp := time.Now().Add(lifetime)
	s.accessTokens[id] = accessToken{clientID: clientID, userID: userID, scopes: scopes, expiration: exp}
	return id, exp, nil
}

// CreateAccessAndRefreshTokens issues a refresh token for a code exchange
// with offline_access, and rotates it on a refresh: the old one stops working.
func (s *storage) CreateAccessAndRefreshTokens(_ context.Context, r op.TokenRequest, current string) (string, string, time.Time, error) {
	var clientID string
	var amr []string
	var authTime time.Time
	switch req := r.(type) {
	case *authRequest:
		clientID, amr, authTime = req.clientID, req.GetAMR(), req.authTime
	case refreshRequest:
		clientID, amr, authTime = req.clientID, req.amr, req.authTime
	default:
		return "", "", time.Time{}, fmt.Errorf("unexpected token request %T", r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if current != "" {
		old, ok := s.refreshTokens[current]
		if !ok || time.Now().After(old.expiration) {
			return "", "", time.Time{}, op.ErrInvalidRefreshToken
		}
		delete(s.refreshTokens, current)
		delete(s.accessTokens, old.accessTokenID)
	}
	accessID, exp, err := s.newAccessTokenLocked(clientID, r.GetSubject(), r.GetScopes())
	if err != nil {
		return "", "", time.Time{}, err
	}
	token, err := randomID()
	if err != nil {
		return "", "", time.Time{}, err
	}
	s.refreshTokens[token] = &refreshToken{
		token: token, clientID: clientID, userID: r.GetSubject(), audience: r.GetAudience(),
		scopes: r.GetScopes(), amr: amr, authTime: authTime,
		expiration: time.Now().Add(refreshTokenTTL), accessTokenID: accessID,
	}
	return accessID, token, exp, nil
}

func (s *storage) TokenRequestByRefreshToken(_ context.Context, token string) (op.RefreshTokenRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.refreshTokens[token]
	if !ok || time.Now().After(t.expiration) {
		return nil, op.ErrInvalidRefreshToken
	}
	copied := *t
	return refreshRequest{&copied}, nil
}

// TerminateSession ends every token of userID for clientID (RP-initiated logout).
func (s *storage) TerminateSession(_ context.Context, userID, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, t := range s.accessTokens {
		if t.userID == userID && t.clientID == clientID {
			delete(s.accessTokens, id)
		}
	}
	for id, t := range s.refreshTokens {
		if t.userID == userID && t.clientID == clientID {
			delete(s.refreshTokens, id)
		}
	}
	return nil
}

func (s *storage) GetRefreshTokenInfo(_ context.Context, clientID, token string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.refreshTokens[token]
	if !ok || t.clientID != clientID {
		return "", "", op.ErrInvalidRefreshToken
	}
	return t.userID, t.token, nil
}

func (s *storage) RevokeToken(_ context.Context, token, _, clientID string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.accessTokens[token]; ok {
		if t.clientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("token was not issued for this client")
		}
		delete(s.accessTokens, token)
		return nil
	}
	if t, ok := s.refreshTokens[token]; ok {
		if t.clientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("token was not issued for this client")
		}
		delete(s.refreshTokens, token)
		delete(s.accessTokens, t.accessTokenID)
	}
	return nil // an unknown token is already as revoked as it gets (RFC 7009)
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) { return &s.key, nil }

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{publicKey{s.key}}, nil
}

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	c, ok := s.clients[id]
	if !ok {
		return nil, fmt.Errorf("unknown client %q", id)
	}
	return c, nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	c, ok := s.clients[id]
	if !ok || !constantTimeEqual(c.Secret, secret) {
		return errors.New("wrong client id or secret")
	}
	return nil
}

// SetUserinfoFromScopes is left empty as zitadel advises: SetUserinfoFromRequest does the work.
func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

func (s *storage) SetUserinfoFromRequest(_ context.Context, info *oidc.UserInfo, r op.IDTokenRequest, scopes []string) error {
	return s.setUserinfo(info, r.GetSubject(), scopes)
}

func (s *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, tokenID, _, _ string) error {
	s.mu.Lock()
	t, ok := s.accessTokens[tokenID]
	s.mu.Unlock()
	if !ok || time.Now().After(t.expiration) {
		return errors.New("access token invalid or expired")
	}
	return s.setUserinfo(info, t.userID, t.scopes)
}

func (s *storage) SetIntrospectionFromToken(_ context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	s.mu.Lock()
	t, ok := s.accessTokens[tokenID]
	s.mu.Unlock()
	if !ok || time.Now().After(t.expiration) || t.clientID != clientID {
		return errors.New("access token invalid, expired or not this client's")
	}
	info := new(oidc.UserInfo)
	if err := s.setUserinfo(info, subject, t.scopes); err != nil {
		return err
	}
	resp.SetUserInfo(info)
	resp.Scope = t.scopes
	resp.ClientID = t.clientID
	resp.Expiration = oidc.FromTime(t.expiration)
	return nil
}

// setUserinfo fills the claims of userID. sub is the username, so a cluster
// that maps the sub claim sees "alice", not an opaque id; groups is always set
// because kube-apiserver reads it from the ID token.
func (s *storage) setUserinfo(info *oidc.UserInfo, userID string, scopes []string) error {
	u, ok := s.users[userID]
	if !ok {
		return fmt.Errorf("unknown user %q", userID)
	}
	info.Subject = u.Username
	for _, scope := range scopes {
		switch scope {
		case oidc.ScopeEmail:
			info.Email = u.Email
			info.EmailVerified = oidc.Bool(u.Email != "")
		case oidc.ScopeProfile:
			info.PreferredUsername = u.Username
			info.Name = u.Username
		}
	}
	groups := u.Groups
	if groups == nil {
		groups = []string{} // an empty list, not a missing claim
	}
	info.AppendClaims("groups", groups)
	return nil
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

// GetKeyByIDAndClientID and ValidateJWTProfileScopes serve the JWT profile
// grant, which no devcluster client uses.
func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("JWT profile grant is not supported")
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("JWT profile grant is not supported")
}

func (s *storage) Health(context.Context) error { return nil }

// signingKey is the RSA key that signs ID tokens; its id is derived from the
// public key, so it stays the same across restarts and verifiers that cached
// the key set keep working.
type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

type publicKey struct{ signingKey }

func (k publicKey) ID() string                         { return k.id }
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.key.PublicKey }

func loadSigningKey(path string) (signingKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return signingKey{}, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return signingKey{}, fmt.Errorf("%s: no PRIVATE KEY PEM block", path)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return signingKey{}, fmt.Errorf("%s: %w", path, err)
	}
	key, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		return signingKey{}, fmt.Errorf("%s: %T is not an RSA key (ID tokens are signed RS256)", path, parsed)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return signingKey{}, err
	}
	sum := sha256.Sum256(der)
	return signingKey{id: base64.RawURLEncoding.EncodeToString(sum[:12]), key: key}, nil
}

func randomID() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// constantTimeEqual compares secrets without leaking through timing how much matched.
func constantTimeEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
