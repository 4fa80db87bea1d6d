package auth

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// fakeCluster stands in for the API server in these unit tests only (the
// integration test in handlers uses Leases on the devcluster): it keeps what
// is put and tells every replica's revoker, as their watches would.
type fakeCluster struct {
	mu       sync.Mutex
	objects  map[string]kube.Revocation
	writes   int
	replicas []*SharedRevoker
	cut      map[*SharedRevoker]bool // replicas whose watch delivers nothing
	restored chan kube.Revocation    // Restore's writes, if set
}

// watching are the replicas whose watch delivers (under f.mu).
func (f *fakeCluster) watching() []*SharedRevoker {
	var out []*SharedRevoker
	for _, r := range f.replicas {
		if !f.cut[r] {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeCluster) Put(_ context.Context, r kube.Revocation) error {
	f.mu.Lock()
	f.objects[r.Name] = r
	f.writes++
	reps := f.watching()
	f.mu.Unlock()
	for _, rep := range reps {
		rep.Apply(r)
	}
	return nil
}

func (f *fakeCluster) Restore(ctx context.Context, r kube.Revocation) error {
	if err := f.Put(ctx, r); err != nil {
		return err
	}
	if f.restored != nil {
		f.restored <- r
	}
	return nil
}

func (f *fakeCluster) Delete(_ context.Context, name string) error {
	f.mu.Lock()
	delete(f.objects, name)
	reps := f.watching()
	f.mu.Unlock()
	for _, rep := range reps {
		rep.Forget(name)
	}
	return nil
}

// Beat delivers the heartbeat to every replica whose watch is not cut, as
// the API server's watch would, in order after the writes before it.
func (f *fakeCluster) Beat(_ context.Context, marker string) error {
	f.mu.Lock()
	reps := f.watching()
	f.mu.Unlock()
	for _, rep := range reps {
		rep.Heard(marker)
	}
	return nil
}

// reconnect ends the cut of r's watch: it relists, as an informer does.
func (f *fakeCluster) reconnect(r *SharedRevoker) {
	f.mu.Lock()
	delete(f.cut, r)
	objs := make([]kube.Revocation, 0, len(f.objects))
	for _, o := range f.objects {
		objs = append(objs, o)
	}
	f.mu.Unlock()
	for _, o := range objs {
		r.Apply(o)
	}
}

func newReplicas(n int, clock *time.Time) (*fakeCluster, []*SharedRevoker) {
	f := &fakeCluster{objects: map[string]kube.Revocation{}, cut: map[*SharedRevoker]bool{}}
	for range n {
		r := NewSharedRevoker(f, 8*time.Hour)
		r.now = func() time.Time { return *clock }
		r.SetReady(func() bool { return true })
		f.replicas = append(f.replicas, r)
	}
	for _, r := range f.replicas {
		r.Beat(context.Background()) // heard at once: current
	}
	return f, f.replicas
}

func TestSharedRevokerHoldsOnEveryReplicaAndExpires(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cluster, reps := newReplicas(2, &clock)
	a, b := reps[0], reps[1]
	var ended []string
	b.OnRevoke(func(name string) { ended = append(ended, name) })

	sess := Session{ID: "s1", User: "alice", IssuedAt: clock}
	other := Session{ID: "s2", User: "alice", IssuedAt: clock}
	if err := a.Revoke(sess, clock.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !a.Revoked(sess) || !b.Revoked(sess) || b.Revoked(other) {
		t.Fatal("a sign-out on A must hold on A and B, for that session only")
	}
	if len(ended) != 1 || ended[0] != SessionRevocationName(sess.ID) || cluster.writes != 1 {
		t.Fatalf("B told of %v, %d writes", ended, cluster.writes)
	}
	if _, ok := cluster.objects[SessionRevocationName(sess.ID)]; !ok {
		t.Fatal("the revocation is not named by the session's hash")
	}
	clock = clock.Add(time.Hour)
	if a.Revoked(sess) {
		t.Fatal("the revocation outlived the session")
	}
	a.Sweep(context.Background())
	if len(cluster.objects) != 0 || a.Len() != 0 || b.Len() != 0 {
		t.Fatalf("expired revocation kept: %d in the cluster, %d and %d in memory", len(cluster.objects), a.Len(), b.Len())
	}
}

// At the bound a sign-out still holds: it revokes all of the user's sessions
// issued until then (one object per user), and past the user bound all
// sessions issued until then (one object). Nothing is forgotten early and
// the cluster holds at most MaxSessions + MaxUsers + 1 objects.
func TestSharedRevokerAtItsBoundSignsOutMoreNeverLess(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cluster, reps := newReplicas(1, &clock)
	r := reps[0]
	r.MaxSessions, r.MaxUsers = 3, 2
	issued := clock
	var revoked []Session
	for i, user := range []string{"a", "b", "c"} {
		s := Session{ID: "s" + user, User: user, IssuedAt: issued}
		if err := r.Revoke(s, clock.Add(time.Hour+time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
		revoked = append(revoked, s)
	}
	clock = clock.Add(time.Second)
	d1, d2 := Session{ID: "d1", User: "d", IssuedAt: issued}, Session{ID: "d2", User: "d", IssuedAt: issued}
	if err := r.Revoke(d1, clock.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Second)
	later := Session{ID: "later-d", User: "d", IssuedAt: clock} // signed in after the sign-out
	if !r.Revoked(d1) || !r.Revoked(d2) {
		t.Fatal("past the session bound, the sign-out must revoke the user's sessions")
	}
	if r.Revoked(later) {
		t.Fatal("a session signed in after the sign-out is revoked")
	}
	for _, s := range revoked {
		if !r.Revoked(s) {
			t.Fatalf("session %s forgotten early", s.ID)
		}
	}
	if err := r.Revoke(Session{ID: "e1", User: "e", IssuedAt: issued}, clock.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// Users are full now (d, e): f's sign-out revokes everyone issued until now.
	bystander := Session{ID: "g1", User: "g", IssuedAt: issued}
	if err := r.Revoke(Session{ID: "f1", User: "f", IssuedAt: issued}, clock.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !r.Revoked(Session{ID: "f1", User: "f", IssuedAt: issued}) || !r.Revoked(bystander) {
		t.Fatal("past both bounds, the sign-out must revoke every session issued until then")
	}
	clock = clock.Add(time.Second)
	if r.Revoked(Session{ID: "new", User: "g", IssuedAt: clock}) {
		t.Fatal("a session issued after the sign-out of everyone is revoked")
	}
	if n := len(cluster.objects); n > r.MaxSessions+r.MaxUsers+1 {
		t.Fatalf("%d objects in the cluster, over the bound", n)
	}
}

func TestSharedRevokerRefusesSessionsUntilItKnowsTheSignOuts(t *testing.T) {
	s := NewSessions()
	cluster := &fakeCluster{objects: map[string]kube.Revocation{}}
	shared := NewSharedRevoker(cluster, s.Absolute)
	cluster.replicas = append(cluster.replicas, shared)
	s.Revocations = shared
	c, _ := startSession(t, s, "alice")
	if _, err := s.Check(httptest.NewRecorder(), requestWith(c)); err != ErrNotReady {
		t.Fatalf("before the watch listed the sign-outs: %v, want ErrNotReady", err)
	}
	shared.SetReady(func() bool { return true })
	if _, err := s.Check(httptest.NewRecorder(), requestWith(c)); err != ErrNotReady {
		t.Fatalf("listed, before the first heartbeat came back: %v, want ErrNotReady", err)
	}
	shared.Beat(context.Background())
	if _, err := s.Check(httptest.NewRecorder(), requestWith(c)); err != nil {
		t.Fatal(err)
	}
}
