// Package testwait holds the tests' bounded waits: a test that waits for
// something that never comes fails with what it waited for, instead of
// hanging until go test's 10-minute timeout kills the whole package's binary
// (and with it every later test's result).
package testwait

import (
	"testing"
	"time"
)

// Within is the bound for a wait on something the code under test does at
// once (a goroutine's send, a callback): generous on a loaded 2-core machine,
// still far below the package timeout.
const Within = 30 * time.Second

// Recv returns the next value from ch, or fails the test naming what it
// waited for when none arrives within d (or ch is closed).
func Recv[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatalf("waiting for %s: channel closed", what)
		}
		return v
	case <-timer.C:
		t.Fatalf("waiting for %s: nothing within %v", what, d)
	}
	panic("unreachable")
}
