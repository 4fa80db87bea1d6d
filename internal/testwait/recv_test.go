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
		if !fails(t, func(ft testing.TB) { Recv(ft, ch, 10*time.Millisecond, "nothing") }) {
			t.Fatalf("closed=%v: Recv returned without failing", closed)
		}
	}
}

// fails reports whether wait fails the fake TB it is given (bounded: a wait
// that never ends fails the test).
func fails(t *testing.T, wait func(testing.TB)) bool {
	t.Helper()
	ft := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }() // fatalTB panics to stop like FailNow's Goexit
		wait(ft)
	}()
	select {
	case <-done:
	case <-time.After(Within):
		t.Fatal("the wait did not end")
	}
	return ft.failed
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
