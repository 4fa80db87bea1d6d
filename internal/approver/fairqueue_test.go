package approver

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestFairQueueServesOthersDuringAStorm: a storm of 1,000 requests from one
// node, queued first (and older), then one request from each of 100 other
// nodes. Every other node is served within the first round, its fair share
// (one request per requester per round): by the 101st request, not after
// the storm's thousand. The storm's own requests come oldest first.
func TestFairQueueServesOthersDuringAStorm(t *testing.T) {
	q := newFairQueue()
	t0 := time.Now()
	for i := range 1000 {
		q.Add(item{Name: fmt.Sprintf("storm-%04d", i), Requester: "system:node:storm", Created: t0.Add(time.Duration(i) * time.Millisecond)})
	}
	for i := range 100 {
		q.Add(item{Name: fmt.Sprintf("other-%03d", i), Requester: fmt.Sprintf("system:node:other-%03d", i), Created: t0.Add(time.Hour)})
	}
	if q.Len() != 1100 {
		t.Fatalf("queued %d, want 1100", q.Len())
	}
	served := map[string]int{} // other requester → position
	lastStorm := -1
	for pos := range 1100 {
		it, ok := q.Get()
		if !ok {
			t.Fatal("the queue shut down")
		}
		q.Done(it)
		if it.Requester == "system:node:storm" {
			var n int
			fmt.Sscanf(it.Name, "storm-%d", &n)
			if n != lastStorm+1 {
				t.Fatalf("the storm's request %d came after %d: not oldest first", n, lastStorm)
			}
			lastStorm = n
			continue
		}
		served[it.Requester] = pos
	}
	if len(served) != 100 {
		t.Fatalf("served %d other requesters, want 100", len(served))
	}
	for r, pos := range served {
		// One round is 101 requesters; each is served once per round.
		if pos > 100 {
			t.Errorf("%s served at position %d, after its fair share (within the first 101)", r, pos)
		}
	}
	if q.Len() != 0 {
		t.Errorf("%d left", q.Len())
	}
}

// TestFairQueueOneRequestPerRequesterAtATime: while one of a requester's
// requests is worked, its others wait and other requesters are served; a
// name is queued once, and a name added while worked is queued again at Done.
func TestFairQueueOneRequestPerRequesterAtATime(t *testing.T) {
	q := newFairQueue()
	t0 := time.Now()
	a1 := item{Name: "a1", Requester: "a", Created: t0}
	a2 := item{Name: "a2", Requester: "a", Created: t0.Add(time.Second)}
	b1 := item{Name: "b1", Requester: "b", Created: t0.Add(time.Minute)}
	q.Add(a2)
	q.Add(a1)
	q.Add(a1) // queued once
	q.Add(b1)
	if q.Len() != 3 {
		t.Fatalf("queued %d, want 3", q.Len())
	}
	first, _ := q.Get()
	if first.Name != "a1" {
		t.Fatalf("first %s, want a1 (a's oldest, a first in turn)", first.Name)
	}
	second, _ := q.Get()
	if second.Name != "b1" {
		t.Fatalf("second %s, want b1: a is being worked", second.Name)
	}
	got := make(chan item)
	go func() { it, _ := q.Get(); got <- it }()
	select {
	case it := <-got:
		t.Fatalf("got %s while a's other request is worked", it.Name)
	case <-time.After(50 * time.Millisecond):
	}
	q.Add(a1) // changed while worked: again after Done
	q.Done(first)
	if it := <-got; it.Name != "a1" {
		t.Fatalf("after Done: %s, want a1 again (oldest of a)", it.Name)
	}
	q.Done(a1)
	q.Done(b1)
	if it, _ := q.Get(); it.Name != "a2" {
		t.Fatalf("then %s, want a2", it.Name)
	}
}

// TestFairQueueAddAfterAndShutDown: a delayed add arrives after its delay;
// ShutDown ends every waiting Get.
func TestFairQueueAddAfterAndShutDown(t *testing.T) {
	q := newFairQueue()
	start := time.Now()
	q.AddAfter(item{Name: "x", Requester: "r", Created: start}, 30*time.Millisecond)
	it, ok := q.Get()
	if !ok || it.Name != "x" || time.Since(start) < 30*time.Millisecond {
		t.Fatalf("got %v %v after %v", it, ok, time.Since(start))
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, ok := q.Get(); ok {
				t.Error("Get answered after ShutDown")
			}
		})
	}
	q.Done(it)
	time.Sleep(10 * time.Millisecond)
	q.ShutDown()
	wg.Wait()
}
