package auth

import (
	"encoding/hex"
	"sync"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// DefaultStoreSize bounds the token-mode sign-ins kept at once.
const DefaultStoreSize = 10000

// Store keeps token-mode identities (with their bearer tokens) server-side,
// keyed by a random session id that the session cookie carries: the token
// never reaches the browser, and signing out forgets it. Entries end at their
// expiry or on Delete; when the store is full the entry expiring first makes
// room, and one user's sign-ins beyond PerUser replace that user's oldest.
// It is safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	max     int
	entries map[string]storeEntry
	// Idle, if set, forgets an entry not asked for this long (the session's idle limit).
	Idle time.Duration
	// PerUser bounds the entries of one user (DefaultSessionsPerUser if 0, store_cap.go).
	PerUser int
	now     func() time.Time
}

type storeEntry struct {
	id        kube.Identity
	expires   time.Time
	lastSeen  time.Time
	checkedAt time.Time    // when the API server last accepted the token
	oidc      *OIDCSession // an OIDC sign-in's tokens (oidc_session.go)
}

// NewStore returns a store holding at most max identities (DefaultStoreSize if 0).
func NewStore(max int) *Store {
	if max <= 0 {
		max = DefaultStoreSize
	}
	return &Store{max: max, entries: map[string]storeEntry{}, now: time.Now}
}

// Put keeps id until expires and returns the new session id naming it.
func (s *Store) Put(id kube.Identity, expires time.Time) string {
	sid := hex.EncodeToString(randomKey(32))
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.makeRoomFor(id.User, now)
	if len(s.entries) >= s.max {
		s.evict(now)
	}
	s.entries[sid] = storeEntry{id: id, expires: expires, lastSeen: now, checkedAt: now}
	return sid
}

// evict drops expired entries, or if none, the one expiring first.
func (s *Store) evict(now time.Time) {
	first, firstAt := "", time.Time{}
	dropped := false
	for k, e := range s.entries {
		if s.over(e, now) {
			delete(s.entries, k)
			dropped = true
			continue
		}
		if first == "" || e.expires.Before(firstAt) {
			first, firstAt = k, e.expires
		}
	}
	if !dropped && first != "" {
		delete(s.entries, first)
	}
}

// Get returns the identity of session id sid if it is kept and not expired.
func (s *Store) Get(sid string) (kube.Identity, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[sid]
	if !ok {
		return kube.Identity{}, false
	}
	now := s.now()
	if s.over(e, now) {
		delete(s.entries, sid)
		return kube.Identity{}, false
	}
	e.lastSeen = now
	s.entries[sid] = e
	return e.id, true
}

func (s *Store) over(e storeEntry, now time.Time) bool {
	return !now.Before(e.expires) || (s.Idle > 0 && now.Sub(e.lastSeen) > s.Idle)
}

// Due reports whether session sid's token was last accepted longer than every
// ago, and if so marks it checked now (so concurrent requests check it once).
func (s *Store) Due(sid string, every time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[sid]
	now := s.now()
	if !ok || now.Sub(e.checkedAt) < every {
		return false
	}
	e.checkedAt = now
	s.entries[sid] = e
	return true
}

// Delete forgets session id sid (sign-out).
func (s *Store) Delete(sid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.entries, sid)
}

// Len is the number of identities kept.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}
