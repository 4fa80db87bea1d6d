package testwait

import (
	"testing"
	"time"
)

func TestRecvReturnsTheValue(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	if got := Recv(t, ch, time.Second, "a seven"); got != 7 {
		t.Fatalf("got %d", got)
	}
}

// A wait that gets nothing fails the test (runs in a fake TB so that the
// failure is observed, not reported).
func TestRecvFailsWhenNothingArrives(t *testing.T) {
	for _, closed := range []bool{false, true} {
		ch := make(chan int)
		if closed {
			close(ch)
		}
		ft := &fatalTB{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() { _ = recover() }() // fatalTB panics to stop like FailNow's Goexit
			Recv(ft, ch, 10*time.Millisecond, "nothing")
		}()
		select {
		case <-done:
		case <-time.After(Within):
			t.Fatalf("closed=%v: Recv did not end", closed)
		}
		if !ft.failed {
			t.Fatalf("closed=%v: Recv returned without failing", closed)
		}
	}
}

type fatalTB struct {
	testing.TB
	failed bool
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}
