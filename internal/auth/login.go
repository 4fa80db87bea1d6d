package auth

import (
	"crypto/subtle"
	"encoding/hex"
	"sync"
)

// LoginTokens hands out one-time login tokens for local mode, like Jupyter's
// startup URL but single-use: once a browser signs in with it, the token is
// spent and the next one is announced (to the terminal, never to a log).
type LoginTokens struct {
	mu       sync.Mutex
	current  string
	announce func(token string)
}

// NewLoginTokens creates the first token and announces it.
func NewLoginTokens(announce func(token string)) *LoginTokens {
	l := &LoginTokens{announce: announce}
	l.rotate()
	return l
}

func (l *LoginTokens) rotate() {
	l.current = hex.EncodeToString(randomKey(24))
	l.announce(l.current)
}

// Redeem reports whether token is the current one-time token, and if so spends it.
func (l *LoginTokens) Redeem(token string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(l.current)) != 1 {
		return false
	}
	l.rotate()
	return true
}
