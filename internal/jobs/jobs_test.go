package jobs

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/testwait"
)

// blocking is a job that reports one progress and runs until its context
// ends or release closes.
func blocking(started chan<- struct{}, release <-chan struct{}) Run[int, string] {
	return func(ctx context.Context, progress func(int)) (string, error) {
		progress(1)
		close(started)
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-release:
			return "result", nil
		}
	}
}

func start(t *testing.T, r *Registry[int, string], owner string, release <-chan struct{}) Snapshot[int, string] {
	t.Helper()
	started := make(chan struct{})
	s, err := r.Start(owner, 0, blocking(started, release))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not start")
	}
	return s
}

// newRegistry is a registry whose jobs' ends are sent to the returned
// channel (OnChange), for the tests to wait on.
func newRegistry(lim Limits) (*Registry[int, string], <-chan Snapshot[int, string]) {
	r := New[int, string](lim)
	ended := make(chan Snapshot[int, string], 16)
	r.OnChange = func(_ string, s Snapshot[int, string]) {
		if s.State != Running {
			ended <- s
		}
	}
	return r, ended
}

// waitEnd waits, bounded, for the next job to end, and checks it is id in
// state want.
func waitEnd(t *testing.T, ended <-chan Snapshot[int, string], id string, want State) Snapshot[int, string] {
	t.Helper()
	s := testwait.Recv(t, ended, 10*time.Second, "a job's end")
	if s.ID != id || s.State != want {
		t.Fatalf("ended %+v, want job %s in state %d", s, id, want)
	}
	return s
}

// TestJobsRunInTheBackgroundAndKeepTheirResult: Start returns at once, the
// job's progress and then its result are read by its owner.
func TestJobsRunInTheBackgroundAndKeepTheirResult(t *testing.T) {
	r, ended := newRegistry(Limits{})
	release := make(chan struct{})
	s := start(t, r, "alice", release)
	if got, ok := r.Get("alice", s.ID); !ok || got.State != Running || got.Progress != 1 {
		t.Fatalf("running job: %+v %v", got, ok)
	}
	close(release)
	waitEnd(t, ended, s.ID, Done)
	if got, _ := r.Get("alice", s.ID); got.State != Done || got.Result != "result" || got.Ended.IsZero() {
		t.Fatalf("done job: %+v", got)
	}
}

// TestJobsAreBoundedPerOwnerAndOverall: one running job per owner and two
// overall by default; a finished job frees its place.
func TestJobsAreBoundedPerOwnerAndOverall(t *testing.T) {
	r := New[int, string](Limits{})
	release := make(chan struct{})
	a := start(t, r, "alice", release)
	if _, err := r.Start("alice", 0, blocking(make(chan struct{}), release)); !errors.Is(err, ErrOwnerBusy) {
		t.Fatalf("alice's second job: %v, want ErrOwnerBusy", err)
	}
	start(t, r, "bob", release)
	if _, err := r.Start("carol", 0, blocking(make(chan struct{}), release)); !errors.Is(err, ErrBusy) {
		t.Fatalf("a third job overall: %v, want ErrBusy", err)
	}
	if _, err := r.Start("", 0, blocking(make(chan struct{}), release)); !errors.Is(err, ErrNoOwner) {
		t.Fatalf("a job of nobody: %v", err)
	}
	if _, ok := r.Cancel("alice", a.ID, 10*time.Second); !ok {
		t.Fatal("alice could not cancel her job")
	}
	start(t, r, "carol", release) // alice's place is free
	close(release)
}

// TestJobsOfAnotherOwnerAreNotFound performs the attack: bob holds alice's
// job ID and asks for it and cancels it; he is told there is no such job,
// and her job runs on to its result.
func TestJobsOfAnotherOwnerAreNotFound(t *testing.T) {
	r, ended := newRegistry(Limits{})
	release := make(chan struct{})
	s := start(t, r, "alice", release)
	for _, owner := range []string{"bob", ""} {
		if got, ok := r.Get(owner, s.ID); ok {
			t.Errorf("%q read alice's job: %+v", owner, got)
		}
		if got, ok := r.Cancel(owner, s.ID, time.Millisecond); ok {
			t.Errorf("%q cancelled alice's job: %+v", owner, got)
		}
	}
	close(release)
	waitEnd(t, ended, s.ID, Done)
}

// TestCancelStopsTheJobPromptly: Cancel ends the job's context and returns
// once it ended, the job Cancelled.
func TestCancelStopsTheJobPromptly(t *testing.T) {
	r := New[int, string](Limits{})
	s := start(t, r, "alice", make(chan struct{})) // never released
	got, ok := r.Cancel("alice", s.ID, 10*time.Second)
	if !ok || got.State != Cancelled {
		t.Fatalf("cancelled job: %+v %v", got, ok)
	}
	if r.Running() != 0 {
		t.Fatalf("%d jobs running after the cancel", r.Running())
	}
}

// TestFinishedJobsAreKeptBounded: past KeptPerOwner the owner's oldest
// finished job goes; past Kept anyone's; after KeepFor every finished one.
func TestFinishedJobsAreKeptBounded(t *testing.T) {
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	r, ended := newRegistry(Limits{KeptPerOwner: 2, Kept: 2, KeepFor: time.Hour})
	r.now = func() time.Time { return now } // read by the jobs' goroutines only while each runs alone
	var dropped []string
	r.OnDrop = func(id string) { dropped = append(dropped, id) }
	done := func(owner string) string {
		release := make(chan struct{})
		close(release)
		s := start(t, r, owner, release)
		waitEnd(t, ended, s.ID, Done)
		now = now.Add(time.Second)
		return s.ID
	}
	a1, a2 := done("alice"), done("alice")
	a3 := done("alice") // alice's oldest goes
	if _, ok := r.Get("alice", a1); ok {
		t.Error("alice's oldest job is kept past KeptPerOwner")
	}
	b1 := done("bob") // two kept overall: the oldest of anyone's goes
	if _, ok := r.Get("alice", a2); ok {
		t.Error("the oldest job is kept past Kept")
	}
	for owner, id := range map[string]string{"alice": a3, "bob": b1} {
		if _, ok := r.Get(owner, id); !ok {
			t.Errorf("%s's newest job is gone", owner)
		}
	}
	now = now.Add(2 * time.Hour)
	if _, ok := r.Get("bob", b1); ok {
		t.Error("a job is kept past KeepFor")
	}
	if !slices.Equal(dropped, []string{a1, a2, a3, b1}) && !slices.Equal(dropped, []string{a1, a2, b1, a3}) {
		t.Errorf("OnDrop saw %v, want %v and the last two in any order", dropped, []string{a1, a2, a3, b1})
	}
}
