package apfload

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// counterFetch serves a body whose rejected counter grows by 50 each scrape.
type counterFetch struct {
	n atomic.Int64
}

func (f *counterFetch) fetch(context.Context) (io.ReadCloser, error) {
	n := f.n.Add(1)
	return io.NopCloser(strings.NewReader(fmt.Sprintf(rejectedText, 50*n, 0, n))), nil
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestSamplerScrapesOnlyWhileLooked(t *testing.T) {
	f := &counterFetch{}
	clk := &clock{t: time.Unix(1000, 0)}
	s := New(f.fetch, Options{Interval: 5 * time.Millisecond, Idle: time.Minute, Now: clk.now})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go s.Run(ctx)

	time.Sleep(50 * time.Millisecond)
	if n := f.n.Load(); n != 0 {
		t.Fatalf("%d scrapes before anyone looked", n)
	}
	ld, err := s.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ld.Levels["pl-a"].RejectedTotal == 0 {
		t.Errorf("first look: %+v", ld.Levels["pl-a"])
	}
	// Rates need a second scrape; the clock moves 10 s per wait.
	deadline := time.Now().Add(5 * time.Second)
	for !ld.HasRates() && time.Now().Before(deadline) {
		clk.add(10 * time.Second / 100)
		time.Sleep(10 * time.Millisecond)
		ld, err = s.Current(ctx)
		if err != nil {
			t.Fatal(err)
		}
	}
	if !ld.HasRates() || ld.Levels["pl-a"].RejectedPerSecond <= 0 {
		t.Fatalf("no rates after looking: %+v", ld)
	}

	// Nobody looks for longer than Idle: scraping stops.
	clk.add(2 * time.Minute)
	time.Sleep(50 * time.Millisecond)
	stopped := f.n.Load()
	time.Sleep(100 * time.Millisecond)
	if n := f.n.Load(); n != stopped {
		t.Fatalf("still scraping after idle: %d then %d", stopped, n)
	}
	// A new look starts it again, without rates spanning the idle gap.
	ld, err = s.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f.n.Load() == stopped {
		t.Error("a look after idle did not scrape")
	}
	if ld.HasRates() && ld.Window > time.Minute {
		t.Errorf("rates span the idle gap: window %v", ld.Window)
	}
}

// TestSamplerRatesNeverSpanAnIdleSpell: a look that comes after an idle
// spell but before the loop noticed it (CI's loaded machine found this in
// TestSamplerScrapesOnlyWhileLooked) keeps the loop scraping; its next
// scrape still starts afresh, without rates averaged over the spell. The
// scrapes are called in turn here, so no goroutine's timing decides.
func TestSamplerRatesNeverSpanAnIdleSpell(t *testing.T) {
	f := &counterFetch{}
	clk := &clock{t: time.Unix(1000, 0)}
	s := New(f.fetch, Options{Interval: time.Hour, Idle: time.Minute, Now: clk.now})
	s.scrapeOnce(t.Context())
	clk.add(10 * time.Second)
	s.scrapeOnce(t.Context())
	ld, err := s.Latest()
	if err != nil || !ld.HasRates() || ld.Window != 10*time.Second {
		t.Fatalf("two scrapes 10 s apart: window %v, rates %v, %v", ld.Window, ld.HasRates(), err)
	}
	clk.add(2 * time.Minute)
	s.scrapeOnce(t.Context())
	if ld, err = s.Latest(); err != nil || ld.HasRates() {
		t.Errorf("the first scrape after a 2-minute spell (Idle 1 min): rates over a window of %v, %v", ld.Window, err)
	}
	clk.add(10 * time.Second)
	s.scrapeOnce(t.Context())
	if ld, err = s.Latest(); err != nil || ld.Window != 10*time.Second {
		t.Errorf("the scrape after it: window %v, %v; want 10s", ld.Window, err)
	}
}

func TestSamplerReportsScrapeError(t *testing.T) {
	s := New(func(context.Context) (io.ReadCloser, error) { return nil, fmt.Errorf("forbidden") }, Options{Interval: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go s.Run(ctx)
	if _, err := s.Current(ctx); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("err = %v", err)
	}
}

func TestSamplerCurrentHonoursDeadline(t *testing.T) {
	s := New(func(context.Context) (io.ReadCloser, error) { return nil, nil }, Options{}) // never Run
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.Current(ctx); err != ErrNoSample {
		t.Errorf("err = %v, want ErrNoSample", err)
	}
}

// Look answers at once and starts the sampler; Latest does not start it.
func TestSamplerLookAnswersAtOnce(t *testing.T) {
	f := &counterFetch{}
	s := New(f.fetch, Options{Interval: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go s.Run(ctx)
	if _, err := s.Latest(); err != ErrNoSample {
		t.Fatalf("Latest before any read: %v", err)
	}
	time.Sleep(20 * time.Millisecond)
	if n := f.n.Load(); n != 0 {
		t.Fatalf("Latest started %d reads", n)
	}
	if _, err := s.Look(); err != ErrNoSample {
		t.Fatalf("Look before any read: %v, want ErrNoSample at once", err)
	}
	ld, err := s.Current(ctx) // the read the look started
	if err != nil || ld.Levels["pl-a"].RejectedTotal == 0 {
		t.Fatalf("after the look: %+v %v", ld, err)
	}
	if ld2, err := s.Look(); err != nil || !ld2.At.Equal(ld.At) {
		t.Fatalf("Look after a read: %+v %v", ld2, err)
	}
}
