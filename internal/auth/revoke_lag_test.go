package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testwait"
)

// The rule of "When the watch is behind" (revoke_shared.go): within MaxLag
// of the last moment B knew it was current, B accepts sessions; beyond, it
// refuses every one, those issued during the gap included, until its watch
// has delivered a heartbeat sent after it came back, by which time it has
// also delivered the sign-out it missed. (newReplicas made each current by
// a first heartbeat at the start.)
func TestSharedRevokerBehindRefusesEverySessionUntilCurrent(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cluster, reps := newReplicas(2, &clock)
	a, b := reps[0], reps[1]
	sessions := NewSessionsWithKeys(RandomKeys())
	sessions.now = func() time.Time { return clock }
	sessions.Revocations = b
	before, beforeSess := startSession(t, sessions, "alice")

	cluster.cut[b] = true // B's watch breaks
	clock = clock.Add(time.Second)
	if err := a.Revoke(beforeSess, clock.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Second)
	during, _ := startSession(t, sessions, "bob") // issued after B last knew it was current

	clock = clock.Add(b.MaxLag - 2*time.Second) // exactly MaxLag since B last knew
	b.Beat(context.Background())                // lost: the watch is cut
	if !b.Ready() {
		t.Fatal("B is behind by MaxLag exactly and must still count as current (a blip must not flap readiness)")
	}
	clock = clock.Add(time.Millisecond)
	if b.Ready() {
		t.Fatal("B is past MaxLag without a heartbeat and still counts as current")
	}
	for name, c := range map[string]*http.Cookie{"signed out on A during the gap": before, "issued during the gap": during} {
		if _, err := sessions.Check(httptest.NewRecorder(), requestWith(c)); err != ErrNotReady {
			t.Errorf("session %s, on B while behind: %v, want ErrNotReady", name, err)
		}
	}
	if st := b.Status(); st == "" || b.Ready() {
		t.Fatal("no status")
	} else {
		t.Logf("B's status: %s", st)
	}

	// The watch comes back: it relists, then delivers B's next heartbeat.
	cluster.reconnect(b)
	clock = clock.Add(time.Second)
	if b.Ready() {
		t.Fatal("B counts as current before a heartbeat sent after the reconnect came back")
	}
	b.Beat(context.Background())
	if !b.Ready() {
		t.Fatalf("B heard its heartbeat and is still behind: %s", b.Status())
	}
	if _, err := sessions.Check(httptest.NewRecorder(), requestWith(before)); err != ErrSignedOut {
		t.Errorf("the session signed out during the gap, on B once current: %v, want ErrSignedOut", err)
	}
	if _, err := sessions.Check(httptest.NewRecorder(), requestWith(during)); err != nil {
		t.Errorf("the session issued during the gap, on B once current: %v", err)
	}
}

// Only B's own heartbeat says when B's watch delivered it; another
// replica's, or one of B's that comes back after a newer one, makes B no
// more current.
func TestSharedRevokerCountsOnlyItsOwnNewerHeartbeats(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cluster, reps := newReplicas(2, &clock)
	a, b := reps[0], reps[1]
	start := b.KnownAt()
	if !start.Equal(clock) {
		t.Fatalf("B's first heartbeat: knownAt %v", start)
	}
	clock = clock.Add(time.Minute)
	a.Beat(context.Background()) // B hears A's marker too (the fake delivers to all)
	if got := b.KnownAt(); !got.Equal(start) {
		t.Fatalf("A's heartbeat moved B's knownAt to %v", got)
	}
	cluster.cut[b] = true
	b.Beat(context.Background()) // lost for now
	var late string
	for m := range b.pending {
		late = m
	}
	cluster.reconnect(b)
	clock = clock.Add(time.Second)
	b.Beat(context.Background())
	if got := b.KnownAt(); !got.Equal(clock) {
		t.Fatalf("B's own heartbeat: knownAt %v, want %v", got, clock)
	}
	b.Heard(late) // the older heartbeat arrives after all
	b.Heard("someone-else-1")
	if got := b.KnownAt(); !got.Equal(clock) {
		t.Fatalf("an older or foreign heartbeat moved knownAt to %v", got)
	}
}

// Deleting a revocation's Lease revives nothing: each replica that saw it
// keeps it until the session would have expired, writes it back and logs it.
// Only once expired is it forgotten.
func TestSharedRevokerKeepsADeletedRevocationUntilItExpires(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cluster, reps := newReplicas(2, &clock)
	cluster.restored = make(chan kube.Revocation, 4)
	a, b := reps[0], reps[1]
	sess := Session{ID: "s1", User: "alice", IssuedAt: clock}
	if err := a.Revoke(sess, clock.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	name := SessionRevocationName(sess.ID)
	if err := cluster.Delete(context.Background(), name); err != nil { // an admin deletes the Lease
		t.Fatal(err)
	}
	if !a.Revoked(sess) || !b.Revoked(sess) {
		t.Fatal("deleting the Lease revived the session")
	}
	for range 2 { // both replicas write it back
		if r := testwait.Recv(t, cluster.restored, testwait.Within, "a replica writing the Lease back"); r.Name != name || !r.Until.Equal(clock.Add(time.Hour)) {
			t.Fatalf("written back: %+v", r)
		}
	}
	if _, ok := cluster.objects[name]; !ok {
		t.Fatal("the Lease was not written back")
	}

	// Near its expiry a deletion is another replica's sweep: kept, not written back.
	clock = clock.Add(time.Hour - time.Minute)
	_ = cluster.Delete(context.Background(), name)
	if !a.Revoked(sess) {
		t.Fatal("deleted a minute before expiry, the session revived")
	}
	select {
	case r := <-cluster.restored:
		t.Fatalf("written back a minute before expiry: %+v", r)
	default:
	}
	clock = clock.Add(time.Minute)
	a.Forget(name)
	if a.Revoked(sess) || a.Len() != 0 {
		t.Fatal("an expired revocation is kept")
	}
}

// An edit that makes a user's revocation cover less (an earlier since) or a
// Lease edited out of the selection (label changed: the watch reports it
// gone) revives nothing.
func TestSharedRevokerUndoesEditsThatCoverLess(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cluster, reps := newReplicas(1, &clock)
	cluster.restored = make(chan kube.Revocation, 4)
	r := reps[0]
	name := userRevocationName("alice")
	rev := kube.Revocation{Name: name, Scope: kube.RevokeUser, Since: clock, Until: clock.Add(8 * time.Hour)}
	if err := cluster.Put(context.Background(), rev); err != nil {
		t.Fatal(err)
	}
	sess := Session{ID: "s1", User: "alice", IssuedAt: clock.Add(-time.Minute)}
	edited := rev
	edited.Since = clock.Add(-time.Hour) // covers only sessions issued an hour earlier
	r.Apply(edited)
	if !r.Revoked(sess) {
		t.Fatal("an edit to an earlier since revived the session")
	}
	if got := testwait.Recv(t, cluster.restored, testwait.Within, "the Lease written back"); !got.Since.Equal(clock) {
		t.Fatalf("written back with since %v, want %v", got.Since, clock)
	}
	r.Forget(name) // label removed: out of the watch's selection
	if !r.Revoked(sess) {
		t.Fatal("a Lease taken out of the selection revived the session")
	}
	testwait.Recv(t, cluster.restored, testwait.Within, "the Lease written back after leaving the selection")
}
