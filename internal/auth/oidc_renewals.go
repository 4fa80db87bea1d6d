package auth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// maxRecentRenewals bounds the renewals a replica remembers (a few hundred
// bytes each).
const maxRecentRenewals = 4096

// recentRenewals remembers, per replica, the renewals it did lately, by the
// session and the ID token they replaced. The browser sends its old cookie
// on requests it started before the renewing response came back (a page's
// parallel requests, the event stream's reconnect); the refresh token in
// that cookie was spent at the provider, which refuses it now, so those
// requests take the renewal already done instead of trying again. A request
// landing on another replica does not find it here: it keeps the old ID
// token while that is valid (Gate.identifyOIDC), and the browser has the
// new cookie by then.
type recentRenewals struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]OIDCSession
}

func renewalKey(sessionID, oldIDToken string) [sha256.Size]byte {
	return sha256.Sum256([]byte(sessionID + "\x00" + oldIDToken))
}

// get returns the renewal of session sessionID's oldIDToken, if this replica
// did one that is still valid.
func (r *recentRenewals) get(sessionID, oldIDToken string, now time.Time) (OIDCSession, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	next, ok := r.m[renewalKey(sessionID, oldIDToken)]
	if !ok || !now.Before(next.Expiry) {
		return OIDCSession{}, false
	}
	return next, true
}

// put remembers next as the renewal of oldIDToken until next expires.
func (r *recentRenewals) put(sessionID, oldIDToken string, next OIDCSession, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[[sha256.Size]byte]OIDCSession)
	}
	if len(r.m) >= maxRecentRenewals {
		for k, v := range r.m {
			if !now.Before(v.Expiry) {
				delete(r.m, k)
			}
		}
	}
	if len(r.m) >= maxRecentRenewals {
		// Full of live renewals: forgetting one only costs its late
		// requests a refused renewal, the old token still being valid.
		for k := range r.m {
			delete(r.m, k)
			break
		}
	}
	r.m[renewalKey(sessionID, oldIDToken)] = next
}
