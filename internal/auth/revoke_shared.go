package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
	// Restore writes back a revocation deleted or edited early.
	Restore(ctx context.Context, r kube.Revocation) error
	// Beat writes marker where every replica's watch sees it.
	Beat(ctx context.Context, marker string) error
}

// Defaults of a SharedRevoker's bounds. A revocation lives at most one
// session lifetime (8 h); a team signing out 500 times an hour stays under
// the first. The Leases take about 300 bytes each in etcd and 1 KB in each
// replica's memory.
const (
	DefaultSharedSessionRevocations = 4096
	DefaultSharedUserRevocations    = 1024
)

// DefaultMaxLag bounds how far behind the cluster a replica's knowledge of
// the sign-outs may be before it refuses every session (see "When the watch
// is behind" on SharedRevoker). It is also the longest a sign-out on one
// replica can take to hold on another whose watch is healthy but slow. A
// watch that reconnects after a dropped connection is back well within it,
// so a blip does not flap readiness; a replica cut off from the API server
// stops accepting sessions after it.
const DefaultMaxLag = 30 * time.Second

// restoreSlack: a revocation deleted this close to its expiry is taken for
// another replica's sweep under a clock a little ahead of ours, not for
// tampering, and is not written back (it is still kept in memory until it
// expires, so it revives nothing here).
const restoreSlack = 2 * time.Minute

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
//
// # When the watch is behind
//
// A replica knows every sign-out that finished before the moment it last
// knew its watch was current (knownAt): when it sent the latest heartbeat
// (Beat, at start and every MaxLag/3) that its watch has delivered back
// (Heard); a watch delivers in commit order, so whatever was written before
// the heartbeat was delivered before it (kube.RevocationSink). A broken,
// relisting or silently stalled watch delivers no heartbeat, and knownAt
// stops moving. The first list alone proves nothing (it may come from a
// lagging cache): a replica that just started is current once its first
// heartbeat comes back.
//
// The rule: while now-knownAt is at most MaxLag the replica is current and
// accepts every session it does not know to be signed out. Beyond, it is
// behind: Ready is false, Sessions.Check refuses every session (ErrNotReady)
// and /readyz says why, so a load balancer sends people to the replicas
// that are current. It refuses every session, not only those issued before
// knownAt: a session issued after knownAt, on any replica, can be signed out
// on another replica during the gap just as well, and this replica would not
// hear of it; nothing in the cookie can tell that apart. The price: while
// every replica is cut off from the API server, nobody is signed in (the
// console could show only cached pages then anyway). A fresh sign-in on a
// replica that is behind is refused at its next request for the same reason.
//
// # Deleted and edited Leases
//
// A revocation once seen is kept in memory until the session it revokes
// expires, whatever happens to its Lease: deleting the Lease, taking its
// label off, or editing its times or scope revives no session on a replica
// that saw it. For the replicas that start later it is written back
// (Restore) and logged, being either tampering or a bug: the console
// deletes a revocation only once expired (Sweep). Times only grow: an edit
// that makes a revocation cover less is undone the same way.
type SharedRevoker struct {
	store       RevocationStore
	absolute    time.Duration
	MaxSessions int
	MaxUsers    int
	// MaxLag: see "When the watch is behind"; set it before Run.
	MaxLag time.Duration
	Log    *slog.Logger

	mu       sync.RWMutex
	sessions map[string]time.Time       // Lease name → until
	users    map[string]kube.Revocation // Lease name → since, until
	all      kube.Revocation
	ready    func() bool
	onRevoke []func(name string)
	now      func() time.Time

	id       string               // this replica's heartbeats
	seq      uint64               // heartbeats sent
	pending  map[string]time.Time // heartbeat marker → when it was sent
	knownAt  time.Time            // every sign-out finished before it is known
	beatErr  error                // the last heartbeat's failure, nil once one succeeds
	wasReady bool                 // Ready as last logged (logBehind)
}

// NewSharedRevoker writes revocations to store; absolute is the sessions'
// lifetime (a user's or everyone's revocation covers sessions issued up to
// then, so it lasts that long).
func NewSharedRevoker(store RevocationStore, absolute time.Duration) *SharedRevoker {
	return &SharedRevoker{store: store, absolute: absolute,
		MaxSessions: DefaultSharedSessionRevocations, MaxUsers: DefaultSharedUserRevocations, MaxLag: DefaultMaxLag,
		Log: slog.Default(), sessions: map[string]time.Time{}, users: map[string]kube.Revocation{}, now: time.Now,
		id: hex.EncodeToString(randomKey(8)), pending: map[string]time.Time{}}
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

// Ready reports whether the revocations in the cluster are known: the watch
// has listed them (SetReady) and is current within MaxLag (see "When the
// watch is behind"). When it is false Sessions.Check refuses every session.
func (s *SharedRevoker) Ready() bool {
	now := s.now()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ready != nil && s.ready() && !s.knownAt.IsZero() && now.Sub(s.knownAt) <= s.MaxLag
}

// KnownAt is the moment before which every sign-out is known here (zero
// before the first list).
func (s *SharedRevoker) KnownAt() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.knownAt
}

// Status says, for /readyz, whether the sign-outs are current and if not why.
func (s *SharedRevoker) Status() string {
	ready := s.Ready()
	now := s.now()
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch {
	case ready:
		return fmt.Sprintf("current (confirmed %s ago)", now.Sub(s.knownAt).Round(time.Second))
	case s.knownAt.IsZero():
		return "not known yet: the watch of the sign-out Leases has not delivered a heartbeat; every session is refused"
	}
	msg := fmt.Sprintf("behind: last confirmed current %s ago (bound %s); every session is refused until the watch of the sign-out Leases catches up",
		now.Sub(s.knownAt).Round(time.Second), s.MaxLag)
	if s.beatErr != nil {
		msg += " (heartbeat: " + s.beatErr.Error() + ")"
	}
	return msg
}

// Heard implements kube.RevocationSink: a heartbeat came back through the
// watch. Only this replica's own markers count: another replica's
// heartbeat says nothing of when this replica's watch delivered it.
func (s *SharedRevoker) Heard(marker string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sent, ok := s.pending[marker]
	if !ok {
		return
	}
	if sent.After(s.knownAt) {
		s.knownAt = sent
	}
	for m, at := range s.pending {
		if !at.After(sent) {
			delete(s.pending, m) // this one and older ones: nothing left to learn
		}
	}
}

// Beat sends one heartbeat (see "When the watch is behind").
func (s *SharedRevoker) Beat(ctx context.Context) {
	s.mu.Lock()
	s.seq++
	marker := fmt.Sprintf("%s-%d", s.id, s.seq)
	sent := s.now() // before the write: conservative
	s.pending[marker] = sent
	for m, at := range s.pending {
		if sent.Sub(at) > s.MaxLag {
			delete(s.pending, m) // heard now, it would not make the replica current
		}
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, s.MaxLag) // heard later, it would not help
	defer cancel()
	err := s.store.Beat(ctx, marker)
	s.mu.Lock()
	s.beatErr = err
	s.mu.Unlock()
}

// logBehind logs when this replica falls behind and when it catches up.
func (s *SharedRevoker) logBehind() {
	ready := s.Ready()
	s.mu.Lock()
	was := s.wasReady
	s.wasReady = ready
	knownAt, beatErr := s.knownAt, s.beatErr
	s.mu.Unlock()
	switch {
	case was && !ready:
		s.Log.Warn("sign-out: the watch of the sign-outs is behind; refusing every session until it catches up",
			"last_current", knownAt, "bound", s.MaxLag, "heartbeat_err", beatErr)
	case !was && ready && !knownAt.IsZero():
		s.Log.Info("sign-out: the watch of the sign-outs is current; accepting sessions")
	}
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

// Apply implements kube.RevocationSink (the watch, and Revoke on this
// replica). A revocation only grows: one that arrives covering less than
// what is known (an edited Lease) leaves memory as it was and is written
// back.
func (s *SharedRevoker) Apply(r kube.Revocation) {
	s.mu.Lock()
	var notify []func(string)
	shrunk, kept := false, r
	switch r.Scope {
	case kube.RevokeSession:
		until, known := s.sessions[r.Name]
		if !known {
			notify = s.onRevoke
		}
		if known && coversLess(r.Until, until) {
			shrunk, kept.Until = true, until
		} else {
			s.sessions[r.Name] = r.Until
		}
	case kube.RevokeUser:
		cur, known := s.users[r.Name]
		if known {
			kept, shrunk = grow(cur, r)
		}
		s.users[r.Name] = kept
	case kube.RevokeAll:
		if s.all.Name != "" {
			kept, shrunk = grow(s.all, r)
		}
		s.all = kept
	}
	s.mu.Unlock()
	if shrunk {
		s.Log.Warn("sign-out: a revocation Lease was changed to cover less than it did; keeping what it covered and writing it back",
			"name", r.Name, "scope", r.Scope)
		go s.restore(kept)
	}
	for _, f := range notify {
		f(r.Name)
	}
}

// grow is cur extended by r (the later since and until of the two), and
// whether r covered less than cur.
func grow(cur, r kube.Revocation) (kube.Revocation, bool) {
	out, shrunk := r, false
	if cur.Since.After(r.Since) {
		out.Since, shrunk = cur.Since, shrunk || coversLess(r.Since, cur.Since)
	}
	if cur.Until.After(r.Until) {
		out.Until, shrunk = cur.Until, shrunk || coversLess(r.Until, cur.Until)
	}
	return out, shrunk
}

// coversLess: a time read back from a Lease (got) is earlier than the one
// known (known) by more than the Lease's rounding (whole seconds of
// duration, microseconds of time) can explain; below that, writing it back
// would only read back the same rounding, forever.
func coversLess(got, known time.Time) bool { return got.Before(known.Add(-time.Second)) }

// Forget implements kube.RevocationSink: a Lease deleted, or edited so that
// it no longer reads as a revocation. A revocation is forgotten only once
// it has expired; before, the Lease's disappearance is logged and the Lease
// written back (see "Deleted and edited Leases").
func (s *SharedRevoker) Forget(name string) {
	now := s.now()
	s.mu.Lock()
	var rev kube.Revocation
	if until, ok := s.sessions[name]; ok && now.Before(until) {
		rev = kube.Revocation{Name: name, Scope: kube.RevokeSession, Since: now, Until: until}
	} else if r, ok := s.users[name]; ok && now.Before(r.Until) {
		rev = r
	} else if s.all.Name == name && now.Before(s.all.Until) {
		rev = s.all
	} else {
		s.drop(name)
	}
	s.mu.Unlock()
	if rev.Name == "" || rev.Until.Sub(now) <= restoreSlack {
		return
	}
	s.Log.Warn("sign-out: a revocation Lease disappeared before the session it revokes expired; keeping it and writing it back",
		"name", name, "scope", rev.Scope, "until", rev.Until)
	go s.restore(rev)
}

// drop forgets the revocation named name (under mu).
func (s *SharedRevoker) drop(name string) {
	delete(s.sessions, name)
	delete(s.users, name)
	if s.all.Name == name {
		s.all = kube.Revocation{}
	}
}

// restore writes rev back to the cluster; from the watch's goroutine, so
// in one of its own.
func (s *SharedRevoker) restore(rev kube.Revocation) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.store.Restore(ctx, rev); err != nil {
		s.Log.Warn("sign-out: could not write a revocation back", "name", rev.Name, "err", err)
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

// Run sends a heartbeat at once and every MaxLag/3 (so that two may be lost
// before the replica counts as behind), and deletes the revocations that
// have expired every SweepEvery, until ctx ends. Every replica sweeps;
// whichever comes second finds the Lease gone.
func (s *SharedRevoker) Run(ctx context.Context) {
	t := time.NewTicker(SweepEvery)
	defer t.Stop()
	beat := time.NewTicker(max(s.MaxLag/3, 10*time.Millisecond))
	defer beat.Stop()
	s.Beat(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
			s.logBehind()
			s.Beat(ctx)
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
		s.mu.Lock()
		s.drop(name)
		s.mu.Unlock()
	}
}
