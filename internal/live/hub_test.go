package live

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// recorder is a Renderer and a Publisher that remember what they saw.
type recorder struct {
	mu        sync.Mutex
	renders   []render
	published []Message
}

type render struct {
	kind   kube.KindID
	names  []string
	status bool
}

func (r *recorder) render(kind kube.KindID, names []string, status bool) []Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.renders = append(r.renders, render{kind, slices.Clone(names), status})
	return []Message{{Topic: string(kind), Event: string(kind), Data: []byte(strings.Join(names, ","))}}
}

func (r *recorder) Publish(msgs ...Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.published = append(r.published, msgs...)
}

func (r *recorder) snapshot() ([]render, []Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.renders), slices.Clone(r.published)
}

func runHub(t *testing.T, rec *recorder, interval time.Duration) *Hub {
	t.Helper()
	h := NewHub(rec.render, rec, HubOptions{Interval: interval, Log: quietLog()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

func TestHubCoalescesABurstBeforeItRuns(t *testing.T) {
	rec := &recorder{}
	h := NewHub(rec.render, rec, HubOptions{Log: quietLog()})
	for range 100 {
		h.Notify(kube.CSRs, "csr-a")
	}
	h.Notify(kube.CSRs, "")
	h.Notify(kube.CRDs, "b.example.com")
	h.flush()
	renders, published := rec.snapshot()
	want := []render{
		{kube.CRDs, []string{"b.example.com"}, false},
		{kube.CSRs, []string{"csr-a"}, true},
	}
	if !slices.EqualFunc(renders, want, func(a, b render) bool {
		return a.kind == b.kind && a.status == b.status && slices.Equal(a.names, b.names)
	}) {
		t.Fatalf("renders %+v, want %+v", renders, want)
	}
	if len(published) != 2 {
		t.Fatalf("published %d messages, want one per kind", len(published))
	}
}

// 100 updates to one object while the hub runs: one or a few messages, the last
// one rendered after the last update.
func TestHubCoalescesABurstWhileRunning(t *testing.T) {
	rec := &recorder{}
	h := runHub(t, rec, time.Second)
	for range 100 {
		h.Notify(kube.CSRs, "csr-a")
	}
	eventually(t, "the burst rendered", func() bool {
		_, pub := rec.snapshot()
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(pub) > 0 && len(h.pending) == 0
	})
	renders, published := rec.snapshot()
	// The first change goes out at once; what came during the interval, in one more batch.
	if len(renders) > 2 || len(published) > 2 {
		t.Fatalf("%d renders, %d messages for a burst of 100 updates to one object; want at most 2", len(renders), len(published))
	}
	for _, r := range renders {
		if !slices.Equal(r.names, []string{"csr-a"}) {
			t.Fatalf("render %+v", r)
		}
	}
}

func TestHubRendersEveryObjectOnceSorted(t *testing.T) {
	rec := &recorder{}
	h := NewHub(rec.render, rec, HubOptions{Log: quietLog()})
	for _, n := range []string{"c", "a", "b", "a", "c"} {
		h.Notify(kube.CSRs, n)
	}
	h.flush()
	renders, _ := rec.snapshot()
	if len(renders) != 1 || !slices.Equal(renders[0].names, []string{"a", "b", "c"}) {
		t.Fatalf("renders %+v", renders)
	}
}

func TestHubSurvivesAPanickingRenderer(t *testing.T) {
	rec := &recorder{}
	calls := 0
	h := NewHub(func(k kube.KindID, names []string, status bool) []Message {
		calls++
		if calls == 1 {
			panic("template bug")
		}
		return rec.render(k, names, status)
	}, rec, HubOptions{Log: quietLog()})
	h.Notify(kube.CSRs, "a")
	h.flush()
	h.Notify(kube.CSRs, "b")
	h.flush()
	if _, pub := rec.snapshot(); len(pub) != 1 || string(pub[0].Data) != "b" {
		t.Fatalf("published %+v", pub)
	}
}

// Notify is called on informer goroutines: it must not wait for rendering.
func TestNotifyDoesNotWaitForRendering(t *testing.T) {
	block := make(chan struct{})
	rendering := make(chan struct{}, 1)
	h := NewHub(func(kube.KindID, []string, bool) []Message {
		select {
		case rendering <- struct{}{}:
		default:
		}
		<-block
		return nil
	}, &recorder{}, HubOptions{Log: quietLog()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	h.Notify(kube.CSRs, "a")
	waitOrFail(t, rendering, "the hub to call the renderer") // the hub is stuck in the renderer now
	notified := make(chan struct{})
	go func() {
		defer close(notified)
		for i := range 10000 {
			h.Notify(kube.CSRs, "n"+string(rune('a'+i%26)))
		}
	}()
	// A Notify that waited for the renderer would hang here: fail in a
	// minute, not at go test's timeout (a watchdog, not a timing).
	waitOrFail(t, notified, "10,000 Notify calls while the renderer is stuck")
	close(block)
	cancel()
	waitOrFail(t, done, "Run to return after cancel")
}

// waitOrFail waits for ch (a receive or its close) and fails the test if
// nothing comes within a minute: a hang shows as a failure naming what, not
// as the package's timeout half an hour later.
func waitOrFail[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("waited a minute for %s", what)
	}
}

// backlogRecorder is a recorder whose connections are behind while told so.
type backlogRecorder struct {
	recorder
	behind atomic.Bool
	asked  atomic.Int64
}

func (b *backlogRecorder) Behind() (int, int) {
	b.asked.Add(1)
	if b.behind.Load() {
		return 2, 20 // more than 1 in 20
	}
	return 1, 20
}

// While more than 1 in 20 connections are behind, a batch waits (up to
// MaxHold) and the changes meanwhile join it; once they have caught up it goes.
func TestHubHoldsABatchWhileTheConnectionsAreBehind(t *testing.T) {
	rec := &backlogRecorder{}
	rec.behind.Store(true)
	h := NewHub(rec.render, rec, HubOptions{Interval: time.Millisecond, MaxHold: time.Hour, Log: quietLog()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// holding waits until the hub has asked n more times, and fails if it
	// published meanwhile.
	holding := func(n int64) {
		for until := rec.asked.Load() + n; rec.asked.Load() < until; time.Sleep(time.Millisecond) {
			if _, published := rec.snapshot(); len(published) != 0 {
				t.Fatalf("published %+v while the connections were behind", published)
			}
		}
	}
	h.Notify(kube.CSRs, "csr-a")
	holding(3)
	h.Notify(kube.CSRs, "csr-b")
	holding(2)
	rec.behind.Store(false)
	for {
		if _, published := rec.snapshot(); len(published) > 0 {
			if len(published) != 1 || string(published[0].Data) != "csr-a,csr-b" {
				t.Fatalf("published %+v, want one message with both changes", published)
			}
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// A backlog that never drains (a tab that stopped reading, before it is
// evicted) holds a batch no longer than MaxHold.
func TestHubHoldsABatchNoLongerThanMaxHold(t *testing.T) {
	rec := &backlogRecorder{}
	rec.behind.Store(true)
	h := NewHub(rec.render, rec, HubOptions{Interval: time.Millisecond, MaxHold: 20 * time.Millisecond, Log: quietLog()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	defer func() { cancel(); <-done }()
	h.Notify(kube.CSRs, "csr-a")
	for {
		if _, published := rec.snapshot(); len(published) == 1 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
