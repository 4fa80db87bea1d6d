package auth

import (
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// TestOneIdentityCannotEvictOthers is the attack on the store's bound: one
// token holder signs in 10,000 times (every sign-in is a Put, each expiring
// later than the one before, as Sessions.Expires gives). Bob, who signed in
// first, must stay signed in; Alice keeps only her newest sessions.
func TestOneIdentityCannotEvictOthers(t *testing.T) {
	s := NewStore(0)
	start := time.Now().Add(time.Hour)
	bob := s.Put(kube.Identity{User: "bob", Token: "bob-token"}, start)

	alice := make([]string, 10000)
	for i := range alice {
		alice[i] = s.Put(kube.Identity{User: "alice", Token: "alice-token"}, start.Add(time.Duration(i+1)*time.Second))
	}
	if id, ok := s.Get(bob); !ok || id.User != "bob" {
		t.Fatalf("after alice signed in 10,000 times, bob's session is gone (store holds %d sessions)", s.Len())
	}
	if n := s.Len(); n != 1+DefaultSessionsPerUser {
		t.Errorf("store holds %d sessions, want bob's and alice's newest %d", n, DefaultSessionsPerUser)
	}
	for i, sid := range alice {
		_, ok := s.Get(sid)
		if newest := i >= len(alice)-DefaultSessionsPerUser; ok != newest {
			t.Fatalf("alice's sign-in #%d kept = %v, want %v (only her newest %d stay)", i, ok, newest, DefaultSessionsPerUser)
		}
	}
}

// TestPerUserLimitKeepsOthersUnderGlobalBound: with many people the global
// bound still holds, and a person's sign-ins beyond PerUser replace their own.
func TestPerUserLimitKeepsOthersUnderGlobalBound(t *testing.T) {
	s := NewStore(50)
	s.PerUser = 2
	exp := time.Now().Add(time.Hour)
	for i := range 100 {
		s.Put(kube.Identity{User: string(rune('a' + i%26))}, exp.Add(time.Duration(i)*time.Second))
	}
	if n := s.Len(); n > 50 {
		t.Fatalf("store holds %d sessions, over its bound of 50", n)
	}
	per := map[string]int{}
	s.mu.Lock()
	for _, e := range s.entries {
		per[e.id.User]++
	}
	s.mu.Unlock()
	for u, n := range per {
		if n > 2 {
			t.Errorf("user %s holds %d sessions, want at most 2", u, n)
		}
	}
}

// BenchmarkPutFullStore: a sign-in when the store is full (10,000 sessions of
// 1,000 users), where Put scans the entries for the user's own and the
// global bound.
func BenchmarkPutFullStore(b *testing.B) {
	s := NewStore(0)
	exp := time.Now().Add(time.Hour)
	for i := range DefaultStoreSize {
		s.Put(kube.Identity{User: "user-" + string(rune('a'+i%1000))}, exp.Add(time.Duration(i)*time.Millisecond))
	}
	b.ResetTimer()
	for i := range b.N {
		s.Put(kube.Identity{User: "user-" + string(rune('a'+i%1000))}, exp.Add(time.Hour+time.Duration(i)*time.Millisecond))
	}
}
