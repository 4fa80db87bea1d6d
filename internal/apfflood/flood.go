package apfflood

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// Request is the request a flood repeats, and how the recorded traffic
// names it (TrafficSeries' Verb, Resource, Namespace).
type Request struct {
	Method, Path              string // Path with its query, e.g. ?dryRun=All
	Body                      []byte
	Verb, Resource, Namespace string
}

// MaxInFlight bounds a flood's requests awaiting their answer. An open-loop
// flood sends each arrival at its time whatever the server answers; this
// pool is large enough that a level queuing requests for seconds does not
// make the flood wait for it (and so closed-loop), small enough to bound
// the test's goroutines and connections.
const MaxInFlight = 2000

// LateAfter is how far past its scheduled time an arrival may be sent and
// still count as on time (the test process shares 2 cores with the API
// servers: its timers slip by a few milliseconds).
const LateAfter = 20 * time.Millisecond

// requestTimeout bounds one request: past the API server's own 60 s
// (--request-timeout), so the server, not the client, ends a request.
const requestTimeout = 70 * time.Second

// Result is what a flood sent and what the API server answered.
type Result struct {
	Rate     float64       // arrivals per second
	Duration time.Duration // of the arrivals
	Sent     int64         // arrivals sent (all of them unless ctx ended first)
	OK       int64         // answered 2xx
	TooMany  int64         // answered 429: APF rejected them
	Other    int64         // any other answer, or no answer (FirstOther says what)
	// Late counts arrivals sent more than LateAfter past their time: a full
	// pool (MaxInFlight) or a slipping timer. MaxLate is the worst slip.
	Late       int64
	MaxLate    time.Duration
	FirstOther string
	// Start is the first arrival's time, End when the last answer came.
	Start, End time.Time
}

// Since and Until are the flood's window in whole seconds, as the recorded
// traffic's buckets are: [Since, Until) holds every bucket its requests can
// be counted in (the API server stamps a request when it receives it,
// after Start and before End).
func (r Result) Since() time.Time { return r.Start.Truncate(time.Second) }
func (r Result) Until() time.Time { return r.End.Truncate(time.Second).Add(time.Second) }

func (r Result) String() string {
	return fmt.Sprintf("%.0f/s for %v: sent %d (late %d, worst %v), 2xx %d, 429 %d, other %d %s, window [%s, %s)",
		r.Rate, r.Duration, r.Sent, r.Late, r.MaxLate.Round(time.Millisecond), r.OK, r.TooMany, r.Other, r.FirstOther,
		r.Since().Format(time.TimeOnly), r.Until().Format(time.TimeOnly))
}

// Flood sends req to the instance target as user (impersonated by the
// devcluster's admin, in system:authenticated) open-loop: arrival i at
// Start + i/rate, for d, each in its own goroutine, whether or not earlier
// ones were answered, as independent clients would. It returns when every
// arrival has been answered (or ctx ends). client-go is not used: it would
// retry 429s and pace requests with its own limiter.
func Flood(ctx context.Context, t testing.TB, target testcluster.APIServer, user string, rate float64, d time.Duration, req Request) Result {
	t.Helper()
	if rate <= 0 || d <= 0 {
		t.Fatalf("flood of %v/s for %v", rate, d)
	}
	hc := impersonating(t, testcluster.RestConfig(t, testcluster.Admin), target, user)
	// client-go's transport speaks HTTP/2: the arrivals share few
	// connections; they are closed with the flood.
	if tr, ok := hc.Transport.(interface{ CloseIdleConnections() }); ok {
		defer tr.CloseIdleConnections()
	}
	n := int64(rate * d.Seconds())
	r := Result{Rate: rate, Duration: d}
	var ok, tooMany, other atomic.Int64
	var firstOther sync.Once
	slots := make(chan struct{}, MaxInFlight)
	var wg sync.WaitGroup
	url := target.Server + req.Path
	r.Start = time.Now()
	for i := range n {
		due := r.Start.Add(time.Duration(float64(i) * float64(time.Second) / rate))
		if wait := time.Until(due); wait > 0 {
			select {
			case <-time.After(wait): // the schedule, not a synchronisation
			case <-ctx.Done():
			}
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		if late := time.Since(due); late > LateAfter {
			r.Late++
			r.MaxLate = max(r.MaxLate, late)
		}
		r.Sent++
		wg.Go(func() {
			defer func() { <-slots }()
			code, err := send(ctx, hc, req.Method, url, req.Body)
			switch {
			case err == nil && code/100 == 2:
				ok.Add(1)
			case err == nil && code == http.StatusTooManyRequests:
				tooMany.Add(1)
			default:
				other.Add(1)
				firstOther.Do(func() { r.FirstOther = fmt.Sprintf("(first: %d %v)", code, err) })
			}
		})
	}
	wg.Wait()
	r.End = time.Now()
	r.OK, r.TooMany, r.Other = ok.Load(), tooMany.Load(), other.Load()
	return r
}

func send(ctx context.Context, hc *http.Client, method, url string, body []byte) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}
