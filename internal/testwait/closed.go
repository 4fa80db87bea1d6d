package testwait

import (
	"testing"
	"time"
)

// Closed waits until ch is closed (a done or entered signal that is closed,
// not sent), or fails the test naming what it waited for when ch is still
// open after d. A value sent on ch is taken for the close it stands in for
// no more than Recv would: it fails too, so a signal's kind cannot drift.
func Closed[T any](t testing.TB, ch <-chan T, d time.Duration, what string) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatalf("waiting for %s: a value came, not the close", what)
		}
	case <-timer.C:
		t.Fatalf("waiting for %s: not closed within %v", what, d)
	}
}
