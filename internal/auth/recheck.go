package auth

import (
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// recheckMemory bounds the sessions whose last token check a replica
// remembers. A session it forgot is checked once more: the bound costs at
// most an extra TokenReview, never a skipped one.
const recheckMemory = 10000

// rechecks remembers, on this replica, when each session's token was last
// accepted and which were refused. The sealed cookie carries when the session
// began (its token was accepted then), but a copy of an old cookie must not
// make every request a review, so the time of the last check is kept here.
// Only sessions with a valid sealed cookie reach it.
type rechecks struct {
	once sync.Once
	mu   sync.Mutex // makes due's read and write one step
	seen *lru.Cache[string, recheckState]
}

type recheckState struct {
	at       time.Time
	rejected bool
}

func (c *rechecks) cache() *lru.Cache[string, recheckState] {
	c.once.Do(func() { c.seen, _ = lru.New[string, recheckState](recheckMemory) })
	return c.seen
}

// due reports whether sess's token was last accepted longer than every ago,
// and if so notes it checked now (so concurrent requests check it once).
func (c *rechecks) due(sess Session, now time.Time, every time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	last := sess.IssuedAt
	if st, ok := c.cache().Get(sess.ID); ok && st.at.After(last) {
		last = st.at
	}
	if now.Sub(last) < every {
		return false
	}
	c.cache().Add(sess.ID, recheckState{at: now})
	return true
}

func (c *rechecks) reject(id string) { c.cache().Add(id, recheckState{rejected: true}) }

func (c *rechecks) rejected(id string) bool {
	st, ok := c.cache().Peek(id)
	return ok && st.rejected
}
