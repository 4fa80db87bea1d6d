package apfload

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeInstance serves rejectedText with the counters it is set to, and the
// process start time; down makes it fail like an instance that is gone.
type fakeInstance struct {
	rejected, dispatched int
	start                int
	down                 bool
	slow                 bool // it connects, then does not answer before the scrape's deadline
	reads                int
}

func (f *fakeInstance) fetch(ctx context.Context) (io.ReadCloser, error) {
	f.reads++
	if f.down {
		// What kube's instance client returns for a refused connect.
		return nil, &url.Error{Op: "Get", URL: "https://10.96.0.5:6443/metrics", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	}
	if f.slow {
		<-ctx.Done()
		return nil, &url.Error{Op: "Get", URL: "https://10.96.0.5:6443/metrics", Err: ctx.Err()}
	}
	body := fmt.Sprintf(rejectedText, f.rejected, 0, f.dispatched) +
		fmt.Sprintf("# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %d\n", f.start)
	return io.NopCloser(strings.NewReader(body)), nil
}

func instancesOf(fs map[string]*fakeInstance) Discover {
	return func(context.Context) ([]Instance, error) {
		var out []Instance
		for name, f := range fs {
			out = append(out, Instance{Name: name, Metrics: f.fetch})
		}
		return out, nil
	}
}

func failingFetch(context.Context) (io.ReadCloser, error) {
	return nil, errors.New("the fallback must not be read")
}

// Each instance's rate comes from two reads of that instance; the total is
// their sum; an instance that stops answering is listed as unreachable, not
// as zero, and the total is the others'.
func TestSamplerReadsEveryInstance(t *testing.T) {
	a := &fakeInstance{rejected: 0, dispatched: 100, start: 1}
	b := &fakeInstance{rejected: 1000, dispatched: 5, start: 2}
	clk := &clock{t: time.Unix(1000, 0)}
	s := New(failingFetch, Options{Now: clk.now, Instances: instancesOf(map[string]*fakeInstance{"10.0.0.2:6443": a, "10.0.0.3:6443": b})})
	ctx := t.Context()

	s.scrapeOnce(ctx)
	clk.add(10 * time.Second)
	b.rejected += 400 // 40/s on b only
	a.dispatched += 50
	s.scrapeOnce(ctx)
	ld, err := s.Latest()
	if err != nil {
		t.Fatal(err)
	}
	if ld.Fallback != "" || len(ld.Instances) != 2 {
		t.Fatalf("fallback %q, instances %+v", ld.Fallback, ld.Instances)
	}
	first, second := ld.Instances[0], ld.Instances[1]
	if first.Name != "10.0.0.2:6443" || second.Name != "10.0.0.3:6443" {
		t.Fatalf("instances not sorted by name: %s, %s", first.Name, second.Name)
	}
	if got := first.Load.Schemas["fs-a"].RejectedPerSecond; got != 0 {
		t.Errorf("instance a rejects %v/s, want 0", got)
	}
	if got := second.Load.Schemas["fs-a"].RejectedPerSecond; got != 40 {
		t.Errorf("instance b rejects %v/s, want 40", got)
	}
	if got := ld.Schemas["fs-a"].RejectedPerSecond; got != 40 {
		t.Errorf("total rejects %v/s, want 40 (a's 0 + b's 40; a rate across instances would be ~100)", got)
	}
	if got := ld.Levels["pl-a"].DispatchedPerSecond; got != 5 {
		t.Errorf("total dispatched %v/s, want 5", got)
	}
	if got := ld.Levels["pl-idle"].NominalSeats; got != 10 {
		t.Errorf("total nominal seats %v, want 10 (5 per instance)", got)
	}

	b.down = true
	clk.add(10 * time.Second)
	s.scrapeOnce(ctx)
	ld, _ = s.Latest()
	if u := ld.Unreachable(); len(u) != 1 || u[0] != "10.0.0.3:6443" {
		t.Fatalf("unreachable = %v, want b", u)
	}
	if ld.Instances[1].Err == nil || ld.Instances[1].Load != nil {
		t.Errorf("b: %+v", ld.Instances[1])
	}
	if got := ld.Levels["pl-idle"].NominalSeats; got != 5 {
		t.Errorf("total nominal seats %v, want a's 5", got)
	}

	// b comes back as a new process with smaller counters: a reset, the
	// rate counts from the restart, never negative.
	b.down, b.start, b.rejected = false, 3, 20
	clk.add(10 * time.Second)
	s.scrapeOnce(ctx)
	ld, _ = s.Latest()
	if !ld.Instances[1].Restarted {
		t.Error("a new start time is not reported as a restart")
	}
	// b's window runs from its last answer, 20 s ago.
	if got := ld.Instances[1].Load.Schemas["fs-a"].RejectedPerSecond; got != 1 {
		t.Errorf("after the restart b rejects %v/s, want 1 (20 since the restart, over 20 s)", got)
	}
}

// When no instance answers at its own address (outside the cluster), the
// sampler reads the kubeconfig's server and says why, and keeps to it for
// DirectRetry.
func TestSamplerFallsBackWhenNoInstanceAnswers(t *testing.T) {
	a := &fakeInstance{down: true}
	one := &fakeInstance{rejected: 5, dispatched: 5, start: 1}
	clk := &clock{t: time.Unix(1000, 0)}
	s := New(one.fetch, Options{Now: clk.now, DirectRetry: time.Minute, Instances: instancesOf(map[string]*fakeInstance{"10.96.0.5:6443": a})})
	s.scrapeOnce(t.Context())
	ld, err := s.Latest()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ld.Fallback, "no API server instance answered at its own address") || len(ld.Instances) != 0 {
		t.Fatalf("fallback %q, instances %v", ld.Fallback, ld.Instances)
	}
	if ld.Levels["pl-a"].RejectedTotal != 5 {
		t.Errorf("fallback read: %+v", ld.Levels["pl-a"])
	}
	clk.add(30 * time.Second)
	s.scrapeOnce(t.Context())
	if a.reads != 1 {
		t.Errorf("the instances were dialled %d times within DirectRetry, want 1", a.reads)
	}
	clk.add(31 * time.Second)
	s.scrapeOnce(t.Context())
	if a.reads != 2 {
		t.Errorf("the instances were not tried again after DirectRetry (%d reads)", a.reads)
	}

	listFails := New(one.fetch, Options{Now: clk.now, Instances: func(context.Context) ([]Instance, error) {
		return nil, errors.New(`endpointslices.discovery.k8s.io is forbidden`)
	}})
	listFails.scrapeOnce(t.Context())
	ld, _ = listFails.Latest()
	if !strings.Contains(ld.Fallback, "cannot be listed") || !strings.Contains(ld.Fallback, "forbidden") {
		t.Errorf("fallback %q", ld.Fallback)
	}
}

// Instances that connect and then do not answer before the scrape's deadline
// are busy, not unroutable: a flooded cluster slows every instance at once,
// and one such scrape must not turn the per-instance view off for
// DirectRetry (it did: TestAPFLoadPerInstance lost its instances under a
// loaded CI). They are listed as not answering, the next scrape reads them.
func TestSamplerKeepsToTheInstancesWhenAllAreSlowOnce(t *testing.T) {
	a := &fakeInstance{dispatched: 100, start: 1}
	b := &fakeInstance{rejected: 1000, start: 2}
	clk := &clock{t: time.Unix(1000, 0)}
	s := New(failingFetch, Options{Now: clk.now, Timeout: 50 * time.Millisecond, Instances: instancesOf(map[string]*fakeInstance{"10.0.0.2:6443": a, "10.0.0.3:6443": b})})
	for _, firstScrape := range []bool{true, false} {
		a.slow, b.slow = true, true
		s.scrapeOnce(t.Context())
		ld, err := s.Latest()
		if err != nil {
			t.Fatalf("first scrape %v: %v (the fallback was read)", firstScrape, err)
		}
		if ld.Fallback != "" || len(ld.Unreachable()) != 2 {
			t.Fatalf("first scrape %v: fallback %q, unreachable %v; want both instances listed as not answering", firstScrape, ld.Fallback, ld.Unreachable())
		}
		a.slow, b.slow = false, false
		clk.add(10 * time.Second)
		s.scrapeOnce(t.Context())
		ld, _ = s.Latest()
		if ld.Fallback != "" || len(ld.Instances) != 2 || len(ld.Unreachable()) != 0 {
			t.Fatalf("first scrape %v: the scrape after the slow one: fallback %q, instances %+v", firstScrape, ld.Fallback, ld.Instances)
		}
		clk.add(10 * time.Second)
	}
}

// cannotReach is what decides the fallback: errors that say the address
// cannot be reached from here, as client-go wraps them, against those of an
// instance that is there.
func TestCannotReach(t *testing.T) {
	wrap := func(err error) error {
		return fmt.Errorf("read the API server's /metrics: %w", &url.Error{Op: "Get", URL: "https://10.96.0.5:6443/metrics", Err: err})
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"refused", wrap(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), true},
		{"dial timeout", wrap(&net.OpError{Op: "dial", Net: "tcp", Err: context.DeadlineExceeded}), true},
		{"untrusted certificate", wrap(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), true},
		{"wrong name", wrap(x509.HostnameError{Certificate: &x509.Certificate{}, Host: "kubernetes.default.svc"}), true},
		{"slow after connect", wrap(context.DeadlineExceeded), false},
		{"reset while reading", wrap(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), false},
		{"error status", errors.New("the server is currently unable to handle the request"), false},
	} {
		if got := cannotReach(tc.err); got != tc.want {
			t.Errorf("%s: cannotReach = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A webhook's health over two instances: calls and fail-opens add up, and
// the quantiles come from the two instances' window histograms added, not
// from either instance alone (the slow instance's calls are a share of all).
func TestSumLoadsWebhookQuantilesFromAddedHistograms(t *testing.T) {
	t0 := time.Unix(1000, 0)
	key := WebhookKey{Type: TypeValidating, Name: "w"}
	zero := hookScrape(t, 0, 0, 0, [9]int{})
	// Instance a: 10 fast calls. Instance b: 10 calls timing out in (1, 2.5], failing open.
	fast := hookScrape(t, 10, 0, 0, [9]int{10, 10, 10, 10, 10, 10, 10, 10, 10})
	slow := hookScrape(t, 10, 10, 10, [9]int{0, 0, 0, 0, 0, 10, 10, 10, 10})
	a := loadOf(&zero, t0, fast, t0.Add(10*time.Second))
	b := loadOf(&zero, t0, slow, t0.Add(10*time.Second))
	total := sumLoads(t0.Add(10*time.Second), []InstanceLoad{{Name: "a", Load: &a}, {Name: "b", Load: &b}, {Name: "c", Err: errors.New("timeout")}})
	w := total.Webhooks[key]
	if w.Calls != 20 || w.FailedOpen != 10 || w.RequestsPerSecond != 2 {
		t.Errorf("total: %+v, want 20 calls, 10 failed open, 2/s", w)
	}
	// 20 calls: 10 ≤ 0.005, 10 in (1, 2.5]. p50 rank 10 is the first bucket's
	// top; p99 rank 19.8 is 9.8/10 of the way from 1 to 2.5.
	if want := 0.005; math.Abs(w.P50-want) > 1e-12 {
		t.Errorf("p50 = %v, want %v", w.P50, want)
	}
	if want := 1 + 1.5*9.8/10; math.Abs(w.P99-want) > 1e-12 {
		t.Errorf("p99 = %v, want %v", w.P99, want)
	}
	if b.Webhooks[key].P50 < 1 || a.Webhooks[key].P99 > 0.005 {
		t.Errorf("each instance keeps its own quantiles: a %+v, b %+v", a.Webhooks[key], b.Webhooks[key])
	}
	if u := total.Unreachable(); len(u) != 1 || u[0] != "c" {
		t.Errorf("unreachable = %v", u)
	}
}

// The priority-level dump is read at each instance's address and summed for
// the total; each instance keeps its own rows, and one whose dump failed
// says so while the others' still add up.
func TestSamplerReadsEachInstancesDump(t *testing.T) {
	dump := func(waiting, rejected int) Fetch {
		return func(context.Context) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(fmt.Sprintf(
				"PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests\n"+
					"workload-low,      %d,           %t,     false,       %d,              1,                 10,                 %d,               0,                0\n",
				min(waiting, 1), waiting == 0, waiting, rejected))), nil
		}
	}
	forbidden := func(context.Context) (io.ReadCloser, error) { return nil, errors.New("forbidden") }
	a, b, c := &fakeInstance{start: 1}, &fakeInstance{start: 2}, &fakeInstance{start: 3}
	list := func(context.Context) ([]Instance, error) {
		return []Instance{
			{Name: "10.0.0.2:6443", Metrics: a.fetch, Dump: dump(0, 0)},
			{Name: "10.0.0.3:6443", Metrics: b.fetch, Dump: dump(7, 35)},
			{Name: "10.0.0.4:6443", Metrics: c.fetch, Dump: forbidden},
		}, nil
	}
	s := New(failingFetch, Options{Instances: list})
	s.scrapeOnce(t.Context())
	ld, err := s.Latest()
	if err != nil {
		t.Fatal(err)
	}
	if total := ld.Dump["workload-low"]; ld.DumpErr != nil || total.Waiting != 7 || total.Rejected != 35 || total.Executing != 2 || total.Dispatched != 20 || total.ActiveQueues != 1 || total.Idle {
		t.Errorf("summed dump %+v (err %v): want 7 waiting, 35 rejected, 2 executing, 20 dispatched, 1 active queue, not idle", total, ld.DumpErr)
	}
	if got := ld.Instances[1].Load.Dump["workload-low"]; ld.Instances[1].Name != "10.0.0.3:6443" || got.Waiting != 7 {
		t.Errorf("instance %s's own dump %+v", ld.Instances[1].Name, got)
	}
	if in := ld.Instances[2]; in.Load.DumpErr == nil || in.Load.Dump != nil {
		t.Errorf("the instance whose dump failed: %+v", in.Load)
	}
	if d, err := sumDumps([]InstanceLoad{{Load: &Load{DumpErr: errors.New("forbidden")}}}); d != nil || err == nil {
		t.Errorf("no dump read: %v %v, want the error", d, err)
	}
}
