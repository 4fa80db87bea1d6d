package testwait

import (
	"testing"
	"time"
)

func TestClosedReturnsOnTheClose(t *testing.T) {
	ch := make(chan struct{})
	close(ch)
	Closed(t, ch, time.Second, "a close")
}

// A channel left open, or one that gets a value instead, fails the test (in
// the fake TB of recv_test.go, so that the failure is observed).
func TestClosedFailsWithoutTheClose(t *testing.T) {
	for _, sent := range []bool{false, true} {
		ch := make(chan int, 1)
		if sent {
			ch <- 1
		}
		if !fails(t, func(ft testing.TB) { Closed(ft, ch, 10*time.Millisecond, "nothing") }) {
			t.Fatalf("sent=%v: Closed returned without failing", sent)
		}
	}
}
