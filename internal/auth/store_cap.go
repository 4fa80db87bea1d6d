package auth

import "time"

// DefaultSessionsPerUser bounds the sign-ins one identity keeps at once: a
// person with a few browsers and devices stays signed in everywhere, while
// one token holder signing in over and over replaces only their own oldest
// sessions instead of filling the store and evicting everyone else.
const DefaultSessionsPerUser = 16

// perUser is the store's per-identity limit.
func (s *Store) perUser() int {
	if s.PerUser > 0 {
		return s.PerUser
	}
	return DefaultSessionsPerUser
}

// makeRoomFor drops user's oldest sessions (the ones expiring first: every
// session gets the same lifetime at Put) until one more fits under the
// per-identity limit, and their expired ones in passing. s.mu is held.
func (s *Store) makeRoomFor(user string, now time.Time) {
	var mine []string
	for k, e := range s.entries {
		if e.id.User != user {
			continue
		}
		if s.over(e, now) {
			delete(s.entries, k)
			continue
		}
		mine = append(mine, k)
	}
	for len(mine) >= s.perUser() {
		oldest := 0
		for i, k := range mine {
			if s.entries[k].expires.Before(s.entries[mine[oldest]].expires) {
				oldest = i
			}
		}
		delete(s.entries, mine[oldest])
		mine = append(mine[:oldest], mine[oldest+1:]...)
	}
}
