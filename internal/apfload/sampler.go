package apfload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Fetch opens the API server's /metrics in the Prometheus text format, as
// the console's own identity.
type Fetch func(ctx context.Context) (io.ReadCloser, error)

// Options tune a Sampler; zero fields take the defaults.
type Options struct {
	Interval time.Duration // between scrapes while someone looks; default 10 s
	Idle     time.Duration // scraping stops this long after the last look; default 2 min
	Timeout  time.Duration // one scrape's deadline; default 8 s
	Limits   Limits        // default DefaultLimits
	Now      func() time.Time
	// Dump, when set, opens the API server's debug dump of its priority
	// levels (/debug/api_priority_and_fairness/dump_priority_levels), read
	// with every scrape of /metrics.
	Dump Fetch
	// Instances, when set, lists the API server's instances: each is read at
	// its own address (instances.go) and the fetch given to New is the
	// fallback when none can be (outside the cluster, their addresses are
	// often unroutable), retried at their addresses every DirectRetry.
	Instances Discover
	// DirectRetry is how long the sampler keeps to the fallback before it
	// tries the instances' addresses again; default 5 min.
	DirectRetry time.Duration
}

// maxInstances bounds how many instances one scrape reads (and the sampler
// keeps totals of); a slice listing more is read through the fallback.
const maxInstances = 16

// Sampler is the one process-wide reader of the API server's flow-control
// metrics. It scrapes only while pages ask for load (Current), every
// Interval, and stops after Idle without a look, so an idle console costs the
// API server nothing. Safe for concurrent use.
type Sampler struct {
	fetch Fetch
	opt   Options
	wake  chan struct{}

	mu       sync.Mutex
	lastLook time.Time
	prev     *Totals
	prevAt   time.Time
	load     *Load
	err      error
	scrapes  int
	updated  chan struct{} // closed and replaced after every scrape
	lastCost Cost
	// instances is each instance's previous totals, by name: only those
	// listed at the latest scrape (memory bounded by maxInstances).
	instances map[string]*instanceState
	// Used by the scraping goroutine alone: when the instances' addresses
	// failed, the fallback and why, until directRetryAt.
	directRetryAt time.Time
	fallbackWhy   string
}

// Cost is what the latest scrape took.
type Cost struct {
	Duration  time.Duration
	BytesRead int64
	KeptBytes int64
}

// ErrNoSample is returned when no scrape finished before the caller's deadline.
var ErrNoSample = errors.New("the API server's metrics have not been read yet")

// New returns a Sampler over fetch; call Run to let it scrape.
func New(fetch Fetch, opt Options) *Sampler {
	if opt.Interval <= 0 {
		opt.Interval = 10 * time.Second
	}
	if opt.Idle <= 0 {
		opt.Idle = 2 * time.Minute
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 8 * time.Second
	}
	if opt.DirectRetry <= 0 {
		opt.DirectRetry = 5 * time.Minute
	}
	if opt.Limits == (Limits{}) {
		opt.Limits = DefaultLimits
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &Sampler{fetch: fetch, opt: opt, wake: make(chan struct{}, 1), updated: make(chan struct{})}
}

// Interval is the time between scrapes while someone looks.
func (s *Sampler) Interval() time.Duration { return s.opt.Interval }

// Run scrapes while someone looks, until ctx ends. Between looks it only waits.
func (s *Sampler) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		s.scrapeWhileLooked(ctx)
	}
}

func (s *Sampler) scrapeWhileLooked(ctx context.Context) {
	t := time.NewTicker(s.opt.Interval)
	defer t.Stop()
	for {
		s.scrapeOnce(ctx)
		s.mu.Lock()
		idle := s.opt.Now().Sub(s.lastLook) > s.opt.Idle
		if idle {
			// The rates of a later look must not span the idle gap.
			s.prev, s.load, s.instances = nil, nil, nil
			// A look before this check was counted in it: its wake-up is spent.
			select {
			case <-s.wake:
			default:
			}
		}
		s.mu.Unlock()
		if idle {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *Sampler) scrapeOnce(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
	defer cancel()
	start := time.Now()
	fallback := ""
	if s.opt.Instances != nil {
		var done bool
		if done, fallback = s.scrapeInstances(ctx, start); done {
			return
		}
	}
	totals, err := s.read(ctx, s.fetch)
	took := time.Since(start)
	var dump map[string]LevelDump
	var dumpErr error
	if err == nil && s.opt.Dump != nil {
		dump, dumpErr = s.readDump(ctx, s.opt.Dump)
	}
	at := s.opt.Now()

	s.mu.Lock()
	defer s.mu.Unlock()
	s.scrapes++
	s.err = err
	s.instances = nil
	if err == nil {
		if s.spansIdle(s.prevAt, at) {
			s.prev = nil
		}
		ld := loadOf(s.prev, s.prevAt, totals, at)
		ld.Dump, ld.DumpErr = dump, dumpErr
		ld.Fallback = fallback
		s.load = &ld
		s.prev, s.prevAt = &totals, at
		s.lastCost = Cost{Duration: took, BytesRead: totals.BytesRead, KeptBytes: totals.KeptBytes}
	}
	close(s.updated)
	s.updated = make(chan struct{})
}

// spansIdle tells whether rates from a sample taken at prevAt to one taken
// at at would span an idle spell (nobody looked for longer than Idle). The
// loop drops its samples when it finds itself idle, but a look that comes
// after the spell and before the loop's next check keeps it scraping: its
// first scrape must then start afresh too, or its rates would average the
// quiet spell (TestSamplerRatesNeverSpanAnIdleSpell).
func (s *Sampler) spansIdle(prevAt, at time.Time) bool {
	return !prevAt.IsZero() && at.Sub(prevAt) > s.opt.Idle
}

func (s *Sampler) read(ctx context.Context, fetch Fetch) (Totals, error) {
	body, err := fetch(ctx)
	if err != nil {
		return Totals{}, fmt.Errorf("read the API server's /metrics: %w", err)
	}
	defer body.Close()
	return Parse(body, s.opt.Limits)
}

// readDump reads dump_priority_levels. Its failure (the console's identity
// may not read it, an API server older than the dump) leaves the metrics be.
func (s *Sampler) readDump(ctx context.Context, fetch Fetch) (map[string]LevelDump, error) {
	body, err := fetch(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the API server's dump_priority_levels: %w", err)
	}
	defer body.Close()
	return ParseDump(body)
}

// Current returns the latest load and records that someone looks, which
// starts the scraping if it had stopped. With no recent sample it waits for
// the next scrape until ctx ends. The error is the latest scrape's.
func (s *Sampler) Current(ctx context.Context) (Load, error) {
	s.mu.Lock()
	s.lastLook = s.opt.Now()
	fresh := s.load != nil && s.opt.Now().Sub(s.load.At) <= 3*s.opt.Interval
	updated := s.updated
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	if !fresh {
		select {
		case <-updated:
		case <-ctx.Done():
		}
	}
	return s.Latest()
}

// Look returns the latest load at once and records that someone looks, which
// starts the scraping if it had stopped. Before the first scrape after a
// quiet spell it returns ErrNoSample: pages render without load and fetch it
// later (Current waits for it).
func (s *Sampler) Look() (Load, error) {
	s.mu.Lock()
	s.lastLook = s.opt.Now()
	s.mu.Unlock()
	// What there is now, taken before the wake: the answer does not depend on
	// whether the scrape it starts happens to finish first.
	ld, err := s.Latest()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return ld, err
}

// Latest returns the latest load without counting as a look: for live
// updates, which must not keep the sampler scraping when nobody looks.
func (s *Sampler) Latest() (Load, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return Load{}, s.err
	}
	if s.load == nil {
		return Load{}, ErrNoSample
	}
	return *s.load, nil
}

// Stats reports how many scrapes were taken and what the latest one cost.
func (s *Sampler) Stats() (scrapes int, last Cost) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scrapes, s.lastCost
}
