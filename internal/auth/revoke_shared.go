package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// RevocationStore keeps revocations where every replica sees them (the
// cluster: kube.Revocations).
type RevocationStore interface {
	Put(ctx context.Context, r kube.Revocation) error
	Delete(ctx context.Context, name string) error
}

// Defaults of a SharedRevoker's bounds. A revocation lives at most one
// session lifetime (8 h); a team signing out 500 times an hour stays under
// the first. The Leases take about 300 bytes each in etcd and 1 KB in each
// replica's memory.
const (
	DefaultSharedSessionRevocations = 4096
	DefaultSharedUserRevocations    = 1024
)

// SharedRevoker is the Revoker of replicas: a sign-out is written to the
// cluster (one Lease, RevocationStore) and every replica learns it from its
// watch (Apply), so the check on each request is a map lookup with no API
// call. It is bounded in time (a revocation is deleted once the session it
// revokes would have expired, Run) and in size: once MaxSessions sessions are
// revoked, a sign-out revokes every session of its user issued until now (one
// Lease per user, rewritten by each of their sign-outs), and once MaxUsers
// users are, every session issued until now (one Lease). Either signs out more
// than asked, never less: a full store never lets a signed-out cookie work
// again, nor refuses a sign-out. Safe for concurrent use.
type SharedRevoker struct {
	store       RevocationStore
	absolute    time.Duration
	MaxSessions int
	MaxUsers    int
	Log         *slog.Logger

	mu       sync.RWMutex
	sessions map[string]time.Time       // Lease name → until
	users    map[string]kube.Revocation // Lease name → since, until
	all      kube.Revocation
	ready    func() bool
	onRevoke []func(name string)
	now      func() time.Time
}

// NewSharedRevoker writes revocations to store; absolute is the sessions'
// lifetime (a user's or everyone's revocation covers sessions issued up to
// then, so it lasts that long).
func NewSharedRevoker(store RevocationStore, absolute time.Duration) *SharedRevoker {
	return &SharedRevoker{store: store, absolute: absolute,
		MaxSessions: DefaultSharedSessionRevocations, MaxUsers: DefaultSharedUserRevocations,
		Log: slog.Default(), sessions: map[string]time.Time{}, users: map[string]kube.Revocation{}, now: time.Now}
}

// SessionRevocationName names the revocation of session id: a hash, so
// neither the Lease nor the watch reveals the id (to which CSRF tokens are
// bound) to whoever may list Leases in the namespace.
func SessionRevocationName(id string) string { return revocationName("s", id) }

func userRevocationName(user string) string { return revocationName("u", user) }

const allRevocationName = "clusterdesk-signout-all"

func revocationName(scope, v string) string {
	sum := sha256.Sum256([]byte("clusterdesk sign-out " + scope + "\x00" + v))
	return "clusterdesk-signout-" + scope + "-" + hex.EncodeToString(sum[:20])
}

// SetReady tells the revoker how to know that its watch has delivered the
// revocations that existed when it started (the informer's HasSynced).
func (s *SharedRevoker) SetReady(ready func() bool) {
	s.mu.Lock()
	s.ready = ready
	s.mu.Unlock()
}

// Ready reports whether the revocations in the cluster are known (false
// until SetReady): before, a session might be one signed out, and
// Sessions.Check refuses every one.
func (s *SharedRevoker) Ready() bool {
	s.mu.RLock()
	ready := s.ready
	s.mu.RUnlock()
	return ready != nil && ready()
}

// OnRevoke calls f with the name (SessionRevocationName) of each session
// revoked from now on, by any replica: the caller ends that session's event
// streams held here.
func (s *SharedRevoker) OnRevoke(f func(name string)) {
	s.mu.Lock()
	s.onRevoke = append(s.onRevoke, f)
	s.mu.Unlock()
}

// Revoke implements Revoker: one API write, then the revocation holds here at
// once and on the other replicas as their watches deliver it.
func (s *SharedRevoker) Revoke(sess Session, until time.Time) error {
	if sess.ID == "" {
		return nil
	}
	now := s.now()
	if !until.After(now) {
		return nil // over anyway
	}
	// Sessions issued within this microsecond are covered too (the Lease
	// keeps microseconds).
	since := now.Truncate(time.Microsecond).Add(time.Microsecond)
	rev := kube.Revocation{Name: SessionRevocationName(sess.ID), Scope: kube.RevokeSession, Since: since, Until: until}
	s.mu.RLock()
	_, known := s.sessions[rev.Name]
	sessionsFull := !known && len(s.sessions) >= s.MaxSessions
	_, userKnown := s.users[userRevocationName(sess.User)]
	usersFull := !userKnown && len(s.users) >= s.MaxUsers
	s.mu.RUnlock()
	switch {
	case sessionsFull && !usersFull:
		rev = kube.Revocation{Name: userRevocationName(sess.User), Scope: kube.RevokeUser, Since: since, Until: since.Add(s.absolute)}
		s.Log.Warn("sign-out: the session revocations are at their bound; signing out every session of the user", "user", sess.User, "bound", s.MaxSessions)
	case sessionsFull:
		rev = kube.Revocation{Name: allRevocationName, Scope: kube.RevokeAll, Since: since, Until: since.Add(s.absolute)}
		s.Log.Warn("sign-out: the session and user revocations are at their bounds; signing out every session", "user", sess.User)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.store.Put(ctx, rev); err != nil {
		return err
	}
	s.Apply(rev)
	return nil
}

// Revoked implements Revoker: lookups in memory, no API call.
func (s *SharedRevoker) Revoked(sess Session) bool {
	now := s.now()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if until, ok := s.sessions[SessionRevocationName(sess.ID)]; ok && now.Before(until) {
		return true
	}
	if len(s.users) > 0 {
		if r, ok := s.users[userRevocationName(sess.User)]; ok && covers(r, sess, now) {
			return true
		}
	}
	return s.all.Name != "" && covers(s.all, sess, now)
}

func covers(r kube.Revocation, sess Session, now time.Time) bool {
	return now.Before(r.Until) && !sess.IssuedAt.After(r.Since)
}

// Apply implements kube.RevocationSink (the watch, and Revoke on this replica).
func (s *SharedRevoker) Apply(r kube.Revocation) {
	s.mu.Lock()
	var notify []func(string)
	switch r.Scope {
	case kube.RevokeSession:
		if _, known := s.sessions[r.Name]; !known {
			notify = s.onRevoke
		}
		s.sessions[r.Name] = r.Until
	case kube.RevokeUser:
		s.users[r.Name] = r
	case kube.RevokeAll:
		s.all = r
	}
	s.mu.Unlock()
	for _, f := range notify {
		f(r.Name)
	}
}

// Forget implements kube.RevocationSink (a Lease deleted).
func (s *SharedRevoker) Forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, name)
	delete(s.users, name)
	if s.all.Name == name {
		s.all = kube.Revocation{}
	}
}

// Len is the number of revocations known (sessions, users, everyone).
func (s *SharedRevoker) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := len(s.sessions) + len(s.users)
	if s.all.Name != "" {
		n++
	}
	return n
}

// SweepEvery is how often Run deletes expired revocations.
const SweepEvery = time.Minute

// Run deletes the revocations that have expired, every SweepEvery until ctx
// ends. Every replica sweeps; whichever comes second finds the Lease gone.
func (s *SharedRevoker) Run(ctx context.Context) {
	t := time.NewTicker(SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Sweep(ctx)
		}
	}
}

// Sweep deletes the expired revocations now.
func (s *SharedRevoker) Sweep(ctx context.Context) {
	now := s.now()
	var expired []string
	s.mu.RLock()
	for name, until := range s.sessions {
		if !now.Before(until) {
			expired = append(expired, name)
		}
	}
	for name, r := range s.users {
		if !now.Before(r.Until) {
			expired = append(expired, name)
		}
	}
	if s.all.Name != "" && !now.Before(s.all.Until) {
		expired = append(expired, s.all.Name)
	}
	s.mu.RUnlock()
	for _, name := range expired {
		if err := s.store.Delete(ctx, name); err != nil {
			s.Log.Warn("sign-out: could not delete an expired revocation", "name", name, "err", err)
			continue
		}
		s.Forget(name)
	}
}
