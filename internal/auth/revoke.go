package auth

import (
	"sync"
	"time"
)

// Revoker remembers signed-out sessions until their cookies would have expired
// anyway. Sessions live in sealed cookies, so a copy of a cookie stays valid
// until its absolute expiry unless the server remembers that it was signed
// out. MemoryRevoker serves one process; SharedRevoker serves replicas, from
// the cluster.
type Revoker interface {
	// Revoke ends sess; it need not be remembered after until (the
	// session's absolute expiry). An error means the revocation may not hold.
	Revoke(sess Session, until time.Time) error
	// Revoked reports whether sess was revoked. It is asked on every
	// request, so it must answer from memory.
	Revoked(sess Session) bool
}

// DefaultRevocations bounds the revocations MemoryRevoker keeps. Each is one
// sign-out within the last session lifetime (8 h); sign-ins need a one-time
// login URL (local mode) or a valid token (token mode), so real use stays far
// below it. Replicas use SharedRevoker, whose bound is smaller and which
// never forgets a revocation early.
const DefaultRevocations = 100_000

// MemoryRevoker is a Revoker for one process. Entries expire at their until;
// when it is full, expired entries go first, then the one expiring soonest
// (the session with the least time left to misuse). Safe for concurrent use.
type MemoryRevoker struct {
	mu      sync.Mutex
	max     int
	entries map[string]time.Time
	now     func() time.Time
}

// NewMemoryRevoker keeps at most max revocations (DefaultRevocations if 0).
func NewMemoryRevoker(max int) *MemoryRevoker {
	if max <= 0 {
		max = DefaultRevocations
	}
	return &MemoryRevoker{max: max, entries: map[string]time.Time{}, now: time.Now}
}

// Revoke implements Revoker; it never fails.
func (m *MemoryRevoker) Revoke(sess Session, until time.Time) error {
	id := sess.ID
	if id == "" {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if !until.After(now) {
		return nil // the session is over anyway
	}
	if _, ok := m.entries[id]; !ok && len(m.entries) >= m.max {
		m.evict(now)
	}
	m.entries[id] = until
	return nil
}

// evict drops expired entries, or if none, the one expiring first (under mu).
// One pass over the map: it runs only when the map is full.
func (m *MemoryRevoker) evict(now time.Time) {
	first, firstAt, dropped := "", time.Time{}, false
	for id, until := range m.entries {
		if !until.After(now) {
			delete(m.entries, id)
			dropped = true
			continue
		}
		if first == "" || until.Before(firstAt) {
			first, firstAt = id, until
		}
	}
	if !dropped && first != "" {
		delete(m.entries, first)
	}
}

// Revoked implements Revoker.
func (m *MemoryRevoker) Revoked(sess Session) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := sess.ID
	until, ok := m.entries[id]
	if !ok {
		return false
	}
	if !until.After(m.now()) {
		delete(m.entries, id)
		return false
	}
	return true
}

// Len is the number of revocations kept.
func (m *MemoryRevoker) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}
