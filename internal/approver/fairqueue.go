package approver

import (
	"container/heap"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// item is one request in the fair queue: its name, whose it is
// (spec.username) and when it was created.
type item struct {
	Name      string
	Requester string
	Created   time.Time
}

// fairQueue is the approver's work queue: fair between requesters, oldest
// first within one. A kubelet retrying a thousand times queues a thousand
// names under one requester; the other requesters' requests are served in
// turn with them, one per requester per round (round-robin), so a storm
// delays the others by one request per round, never by its length
// (client-go's workqueue is FIFO by name: the storm's thousand would go
// first).
//
// Like client-go's workqueue, a name is queued at most once, and a name
// added while it is being worked is queued again when Done. Unlike it, a
// requester has at most one request being worked at a time: its rate limit
// and its duplicates are decided one request after the other, never by two
// workers at once.
type fairQueue struct {
	mu   sync.Mutex
	cond *sync.Cond
	// byRequester holds each requester's queued items, oldest first.
	byRequester map[string]*itemHeap
	// ring[head:] is the requesters with queued items, in turn order.
	ring []string
	head int
	// queued is every queued name (a name is queued once).
	queued map[string]bool
	// working is the names being worked, and busy the requesters they are of.
	working map[string]item
	busy    map[string]bool
	// again is the names added while being worked: queued again at Done.
	again    map[string]item
	shutdown bool
	// failures spaces the retries of a request that failed (Retry).
	failures workqueue.TypedRateLimiter[string]
}

func newFairQueue() *fairQueue {
	q := &fairQueue{
		byRequester: map[string]*itemHeap{}, queued: map[string]bool{},
		working: map[string]item{}, busy: map[string]bool{}, again: map[string]item{},
		// Per request only (5 ms doubling up to 5 min): no bucket shared by
		// every request, so one request failing again and again slows only
		// itself.
		failures: workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 5*time.Minute),
	}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Add queues it, unless its name is queued already.
func (q *fairQueue) Add(it item) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown || q.queued[it.Name] {
		return
	}
	if _, ok := q.working[it.Name]; ok {
		q.again[it.Name] = it
		return
	}
	q.push(it)
	q.cond.Signal()
}

func (q *fairQueue) push(it item) {
	q.queued[it.Name] = true
	h := q.byRequester[it.Requester]
	if h == nil {
		h = &itemHeap{}
		q.byRequester[it.Requester] = h
		q.ring = append(q.ring, it.Requester)
	}
	heap.Push(h, it)
}

// AddAfter queues it after d: a request held by a rate limit until its
// window frees, or throttled by the API server until its Retry-After.
func (q *fairQueue) AddAfter(it item, d time.Duration) {
	if d <= 0 {
		q.Add(it)
		return
	}
	time.AfterFunc(d, func() { q.Add(it) })
}

// Retry queues it again after its own backoff, which grows with each
// failure until Forget.
func (q *fairQueue) Retry(it item) { q.AddAfter(it, q.failures.When(it.Name)) }

// Forget resets a request's backoff.
func (q *fairQueue) Forget(name string) { q.failures.Forget(name) }

// Get waits for the next item: the oldest of the next requester in turn
// that has none being worked. ok is false once the queue is shut down.
func (q *fairQueue) Get() (it item, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if q.shutdown {
			return item{}, false
		}
		if it, ok := q.take(); ok {
			return it, true
		}
		q.cond.Wait()
	}
}

// take pops the next requester in turn that is not busy, and its oldest
// item; the requester goes to the back of the ring if it has more. A busy
// requester met on the way goes to the back too (at most one per worker):
// O(workers) per item, whatever the number of requesters.
func (q *fairQueue) take() (item, bool) {
	for n := len(q.ring) - q.head; n > 0; n-- {
		r := q.ring[q.head]
		q.ring[q.head] = ""
		q.head++
		if q.busy[r] {
			q.ring = append(q.ring, r)
			continue
		}
		h := q.byRequester[r]
		it := heap.Pop(h).(item)
		if h.Len() > 0 {
			q.ring = append(q.ring, r)
		} else {
			delete(q.byRequester, r)
		}
		if q.head > len(q.ring)/2 {
			q.ring = append(q.ring[:0], q.ring[q.head:]...)
			q.head = 0
		}
		delete(q.queued, it.Name)
		q.working[it.Name] = it
		q.busy[it.Requester] = true
		return it, true
	}
	return item{}, false
}

// Done ends the work on it: its requester may be served again, and the
// name is queued again if it was added meanwhile.
func (q *fairQueue) Done(it item) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.working, it.Name)
	delete(q.busy, it.Requester)
	if again, ok := q.again[it.Name]; ok {
		delete(q.again, it.Name)
		if !q.shutdown {
			q.push(again)
		}
	}
	q.cond.Broadcast()
}

// Len is the number of queued names (not those being worked).
func (q *fairQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queued)
}

// ShutDown ends every Get.
func (q *fairQueue) ShutDown() {
	q.mu.Lock()
	q.shutdown = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// itemHeap orders one requester's items oldest first (then by name).
type itemHeap []item

func (h itemHeap) Len() int { return len(h) }
func (h itemHeap) Less(i, j int) bool {
	if !h[i].Created.Equal(h[j].Created) {
		return h[i].Created.Before(h[j].Created)
	}
	return h[i].Name < h[j].Name
}
func (h itemHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)   { *h = append(*h, x.(item)) }
func (h *itemHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
