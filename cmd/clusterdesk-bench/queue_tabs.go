package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/fleet"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
)

// The queue-tabs round (issue 27 point 4): n tabs of people signed in
// twelve tabs each (the console's per-user limit) open the CSR queue's
// Pending tab, newest first, through a real console process (-binary, behind
// HAProxy as the replicas round runs it), and do what web/js/live.js and
// live-csr.js do with what they receive: a view's ops are applied to the
// tab's rows (and the view fetched again when the server says so or the rows
// differ after them); the unfiltered queue's rows (a console without views,
// or a tab beyond its bound) are placed where the page can and otherwise the
// view is fetched again; a resync fetches it. Every fetch is counted and
// timed. Once every tab is connected, the driver creates CSRs and approves
// recent ones at a fixed rate, half each: every write changes the first page
// of every tab, so each tab must see each write (its row's key in an event).

// queueView is the view every tab shows: the Pending tab, newest first.
const queueView = "sort=age&state=pending"

// queueTab is one simulated tab.
type queueTab struct {
	user   string
	cancel context.CancelFunc
	hello  chan struct{}
	done   chan struct{}

	mu       sync.Mutex
	keys     []string          // the rows shown, in order
	states   map[string]string // their data-state
	lat      []time.Duration   // one per write seen
	seen     map[string]int64  // per CSR, the last write counted
	bytes    int64             // event data received
	fetching bool              // a refetch is scheduled or under way
	queued   []sseclient.Event // view events that arrived meanwhile
}

// queueRound is one measured queue-tabs round.
type queueRound struct {
	tabs, writes       int
	connectAll         time.Duration
	expected, got      int
	p50, p99, max      time.Duration
	bytes              int64
	refetches          int64
	refetchP50, refMax time.Duration
	rssBefore, rssPeak int64
	rssAfter           int64
	cpu                float64 // the console's CPU seconds while the driver wrote
	ended              int     // tabs whose stream ended before the round did
}

// writes is one CSR's writes in order (its create, then its approval).
type writes struct {
	mu   sync.Mutex
	list []write
}

type queueBench struct {
	hc     *http.Client
	base   string
	board  sync.Map // CSR name → *writes
	refMu  sync.Mutex
	refLat []time.Duration
	refN   atomic.Int64
}

var (
	trRow    = regexp.MustCompile(`<tr\s+id="(row-csrs-[^"]+)"([^>]*)>`)
	stateAtt = regexp.MustCompile(`data-state="([^"]*)"`)
	opLine   = regexp.MustCompile(`<li data-op="([a-z]+)" data-key="([^"]*)" data-after="([^"]*)"`)
	hashAtt  = regexp.MustCompile(`data-csr-view-ops data-hash="([0-9a-f]*)"`)
	liveURL  = regexp.MustCompile(`<body[^>]*data-live-url="([^"]+)"`)
	keyMatch = regexp.MustCompile(`row-csrs-([a-z0-9.-]+)"`)
)

// runQueueTabs runs one round per tab count against binary.
func runQueueTabs(ctx context.Context, cs kubernetes.Interface, binary string, counts []int, rate int, d time.Duration) error {
	if _, err := os.Stat(binary); err != nil {
		return fmt.Errorf("-binary: %w (run make build)", err)
	}
	dir, err := os.MkdirTemp("", "clusterdesk-bench-queue-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	unbind, err := bindBenchUser(ctx, cs)
	if err != nil {
		return err
	}
	defer unbind()
	load := loadAverage()
	var rounds []queueRound
	for _, n := range counts {
		f, err := fleet.Start(ctx, fleet.Options{
			Binary: binary, Kubeconfig: adminKubeconfig(), Replicas: 1, Dir: fmt.Sprintf("%s/%d", dir, n),
			Identity: &fleet.Identity{User: benchUser, Groups: []string{benchUser}},
		})
		if err != nil {
			return err
		}
		r, err := queueRun(ctx, cs, f, n, rate, d)
		f.Stop()
		if err != nil {
			return fmt.Errorf("%d queue tabs: %w", n, err)
		}
		rounds = append(rounds, r)
	}
	reportQueue(os.Stdout, binary, rounds, rate, d, load)
	for _, r := range rounds {
		if r.got < r.expected || r.writes == 0 {
			return fmt.Errorf("%d queue tabs: %d of %d changes reached the tabs", r.tabs, r.got, r.expected)
		}
	}
	return nil
}

func queueRun(ctx context.Context, cs kubernetes.Interface, f *fleet.Fleet, tabs, rate int, d time.Duration) (queueRound, error) {
	r := queueRound{tabs: tabs}
	prefix := fmt.Sprintf("bench-queue-%d", time.Now().Unix())
	var created []string
	defer func() { deleteCSRs(cs, created) }()
	seed, err := createCSRs(ctx, cs, prefix+"-seed", 30)
	created = append(created, seed...)
	if err != nil {
		return r, err
	}
	time.Sleep(time.Second) // the console's cache sees them
	qb := &queueBench{hc: &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: -1, DisableCompression: true}}, base: f.URL}
	rep := f.Replicas[0]
	r.rssBefore, _ = replicaRSS(ctx, rep)

	start := time.Now()
	ts, err := openAll(tabs, func(i int) (*queueTab, error) { return qb.open(fmt.Sprintf("bench-q-%d", i/12)) })
	defer func() {
		for _, t := range ts {
			if t != nil {
				t.cancel()
				<-t.done
			}
		}
	}()
	if err != nil {
		return r, err
	}
	for _, t := range ts {
		select {
		case <-t.hello:
		case <-t.done:
			return r, fmt.Errorf("a tab's stream ended before it was connected")
		case <-time.After(90 * time.Second):
			return r, fmt.Errorf("not every tab connected within 90 s")
		}
	}
	r.connectAll = time.Since(start)
	fmt.Fprintf(os.Stderr, "bench: %d queue tabs connected in %v\n", tabs, r.connectAll.Round(time.Millisecond))
	// What the connections cost is counted from here: the tabs' refetches and
	// bytes until now were their loading.
	time.Sleep(time.Second)
	for _, t := range ts {
		t.mu.Lock()
		t.bytes = 0
		t.mu.Unlock()
	}
	qb.refN.Store(0)
	qb.refMu.Lock()
	qb.refLat = nil
	qb.refMu.Unlock()

	cpu0, _ := rep.Metric(ctx, "process_cpu_seconds_total")
	peak := r.rssBefore
	stopRSS := make(chan struct{})
	rssDone := make(chan struct{})
	go func() {
		defer close(rssDone)
		for {
			select {
			case <-stopRSS:
				return
			case <-time.After(time.Second):
			}
			if v, err := replicaRSS(ctx, rep); err == nil && v > peak {
				peak = v
			}
		}
	}()
	w, names, err := qb.drive(ctx, cs, prefix, rate, d)
	created = append(created, names...)
	r.writes = w
	close(stopRSS)
	<-rssDone
	if cpu1, err := rep.Metric(ctx, "process_cpu_seconds_total"); err == nil {
		r.cpu = cpu1 - cpu0
	}
	if err != nil {
		return r, fmt.Errorf("driver: %w", err)
	}
	r.expected = w * tabs
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got := 0
		for _, t := range ts {
			t.mu.Lock()
			got += len(t.lat)
			t.mu.Unlock()
		}
		if got >= r.expected {
			break
		}
	}
	r.rssAfter, _ = replicaRSS(ctx, rep)
	r.rssPeak = max(peak, r.rssAfter)
	var all []time.Duration
	for _, t := range ts {
		t.mu.Lock()
		all = append(all, t.lat...)
		r.bytes += t.bytes
		t.mu.Unlock()
	}
	r.got = len(all)
	for _, t := range ts {
		select {
		case <-t.done:
			r.ended++ // evicted (fell behind) or cut off: a browser would reconnect and resync
		default:
		}
	}
	r.p50, r.p99, r.max = percentiles(all)
	r.refetches = qb.refN.Load()
	qb.refMu.Lock()
	r.refetchP50, _, r.refMax = percentiles(qb.refLat)
	qb.refMu.Unlock()
	return r, nil
}

// open loads the queue page as user and connects its stream, as a tab does.
func (qb *queueBench) open(user string) (*queueTab, error) {
	t0 := time.Now()
	body, err := qb.get(context.Background(), "/csrs?"+queueView, user, false)
	if err != nil {
		return nil, err
	}
	if os.Getenv("BENCH_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "bench: page for %s in %v\n", user, time.Since(t0))
	}
	m := liveURL.FindStringSubmatch(body)
	if m == nil {
		return nil, fmt.Errorf("the queue page has no live URL")
	}
	dict, err := dictOf(body)
	if err != nil {
		return nil, err
	}
	t := &queueTab{user: user, hello: make(chan struct{}), done: make(chan struct{}), seen: map[string]int64{}}
	t.setRows(body)
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, qb.base+html.UnescapeString(m[1]), nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(fleet.UserHeader, user)
	resp, err := qb.hc.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("/events: status %d", resp.StatusCode)
	}
	go func() {
		defer close(t.done)
		defer resp.Body.Close()
		rd := sseclient.NewReader(resp.Body)
		for {
			ev, err := rd.Next()
			if err != nil {
				return
			}
			t.mu.Lock()
			t.bytes += int64(len(ev.Data))
			t.mu.Unlock()
			switch ev.Event {
			case "hello":
				close(t.hello)
			case "resync":
				qb.refetch(t)
			case "csrs-view":
				if ev.Data, err = dict.inflate(ev.Data); err != nil {
					fmt.Fprintln(os.Stderr, "bench:", err)
					qb.refetch(t)
					continue
				}
				qb.count(t, ev)
				if t.view(ev) {
					qb.refetch(t)
				}
			case "csrs-rows":
				qb.count(t, ev)
				if t.rows(ev) {
					qb.refetch(t)
				}
			}
		}
	}()
	return t, nil
}

func (qb *queueBench) get(ctx context.Context, path, user string, fragment bool) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, qb.base+path, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set(fleet.UserHeader, user)
	if fragment {
		req.Header.Set("HX-Request", "true")
	}
	resp, err := qb.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: status %d", path, resp.StatusCode)
	}
	return string(b), err
}

// count records, for each CSR row the event names, the writes of that CSR
// it is the first event after (an event late enough to follow the CSR's
// next write answers both).
func (qb *queueBench) count(t *queueTab, ev sseclient.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range keyMatch.FindAllStringSubmatch(ev.Data, -1) {
		v, ok := qb.board.Load(m[1])
		if !ok {
			continue
		}
		ws := v.(*writes)
		ws.mu.Lock()
		for _, w := range ws.list {
			if w.seq <= t.seen[m[1]] || ev.At.Before(w.at) {
				continue
			}
			t.seen[m[1]] = w.seq
			t.lat = append(t.lat, ev.At.Sub(w.at))
		}
		ws.mu.Unlock()
	}
}

// record puts a write of name on the board just before it is sent.
func (qb *queueBench) record(name string, seq int64) {
	v, _ := qb.board.LoadOrStore(name, &writes{})
	ws := v.(*writes)
	ws.mu.Lock()
	ws.list = append(ws.list, write{seq: seq, at: time.Now()})
	ws.mu.Unlock()
}

// refetch fetches the tab's view again after 100–500 ms, as live.js does,
// one at a time; view events that arrive meanwhile are applied after it.
func (qb *queueBench) refetch(t *queueTab) {
	t.mu.Lock()
	if t.fetching {
		t.mu.Unlock()
		return
	}
	t.fetching = true
	t.mu.Unlock()
	go func() {
		time.Sleep(100*time.Millisecond + rand.N(400*time.Millisecond))
		start := time.Now()
		body, err := qb.get(context.Background(), "/csrs?"+queueView, t.user, true)
		took := time.Since(start)
		qb.refN.Add(1)
		qb.refMu.Lock()
		qb.refLat = append(qb.refLat, took)
		qb.refMu.Unlock()
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: refetch:", err)
		}
		t.setRows(body)
		t.mu.Lock()
		t.fetching = false
		queued := t.queued
		t.queued = nil
		t.mu.Unlock()
		stale := false
		for _, ev := range queued {
			stale = t.view(ev)
		}
		if stale {
			qb.refetch(t)
		}
	}()
}

// setRows takes the rows of a page or fragment.
func (t *queueTab) setRows(body string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.keys, t.states = nil, map[string]string{}
	for _, m := range trRow.FindAllStringSubmatch(body, -1) {
		t.keys = append(t.keys, m[1])
		if s := stateAtt.FindStringSubmatch(m[2]); s != nil {
			t.states[m[1]] = s[1]
		}
	}
}

// view applies a view's ops as live-csr.js's onQueueView does; true means
// the view must be fetched again.
func (t *queueTab) view(ev sseclient.Event) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fetching {
		t.queued = append(t.queued, ev)
		return false
	}
	if strings.Contains(ev.Data, "data-refetch") {
		return true
	}
	carried := map[string]bool{}
	for _, m := range trRow.FindAllStringSubmatch(ev.Data, -1) {
		carried[m[1]] = true
	}
	for _, op := range opLine.FindAllStringSubmatch(ev.Data, -1) {
		kind, key, after := op[1], op[2], op[3]
		i := slices.Index(t.keys, key)
		switch kind {
		case "remove":
			if i >= 0 {
				t.keys = slices.Delete(t.keys, i, i+1)
			}
			continue
		case "replace":
			continue
		}
		if i < 0 && !carried[key] {
			return true
		}
		if i >= 0 {
			t.keys = slices.Delete(t.keys, i, i+1)
		}
		at := 0
		if after != "" {
			if at = slices.Index(t.keys, after) + 1; at == 0 {
				return true
			}
		}
		t.keys = slices.Insert(t.keys, at, key)
	}
	m := hashAtt.FindStringSubmatch(ev.Data)
	return m == nil || m[1] != pageHash(t.keys)
}

// rows places the unfiltered queue's changed rows as live-csr.js's
// onQueueRows does on the Pending tab newest first; true means the view
// must be fetched again (a new row, or one that left a paged view).
func (t *queueTab) rows(ev sseclient.Event) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	stale, left := false, false
	paged := len(t.keys) >= 100
	for _, m := range trRow.FindAllStringSubmatch(ev.Data, -1) {
		key, attrs := m[1], m[2]
		i := slices.Index(t.keys, key)
		state := ""
		if s := stateAtt.FindStringSubmatch(attrs); s != nil {
			state = s[1]
		}
		switch {
		case strings.Contains(attrs, "data-live-removed"):
			if i >= 0 {
				t.keys = slices.Delete(t.keys, i, i+1)
				left = true
			}
		case i >= 0 && t.states[key] == state:
		case i >= 0 && state != "pending":
			t.keys = slices.Delete(t.keys, i, i+1)
			left = true
		case i >= 0 || state == "pending":
			stale = true
		}
	}
	return stale || (left && paged)
}

// pageHash is the server's CSRPageHash (handlers/live/csr_views.go).
func pageHash(keys []string) string {
	h := fnv.New32a()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{'\n'})
	}
	return strconv.FormatUint(uint64(h.Sum32()), 16)
}

// drive creates a CSR and approves one created recently (on the first page
// of a Pending tab newest first), in turn, rate writes a second for d.
func (qb *queueBench) drive(ctx context.Context, cs kubernetes.Interface, prefix string, rate int, d time.Duration) (int, []string, error) {
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	end := time.Now().Add(d)
	var names, pending []string
	n := 0
	var seq int64
	for time.Now().Before(end) {
		select {
		case <-ctx.Done():
			return n, names, ctx.Err()
		case <-tick.C:
		}
		seq++
		if n%2 == 0 || len(pending) < 40 {
			name := fmt.Sprintf("%s-c-%05d", prefix, seq)
			qb.record(name+"-00", seq) // createCSRs's name
			got, err := createCSRs(ctx, cs, name, 1)
			names = append(names, got...)
			if err != nil {
				return n, names, err
			}
			pending = append(pending, got...)
		} else {
			// The 40th newest: on the first page, and written long enough
			// after its create that the create's events are out.
			i := len(pending) - 40
			name := pending[i]
			pending = slices.Delete(pending, i, i+1)
			c, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return n, names, err
			}
			c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
				Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Bench", Message: "approved by the queue-tabs bench"})
			qb.record(name, seq)
			if _, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, c, metav1.UpdateOptions{}); err != nil {
				return n, names, err
			}
		}
		n++
	}
	return n, names, nil
}

// replicaRSS is the console's resident memory (its process collector).
func replicaRSS(ctx context.Context, r *fleet.Replica) (int64, error) {
	v, err := r.Metric(ctx, "process_resident_memory_bytes")
	return int64(v), err
}

func reportQueue(w io.Writer, binary string, rounds []queueRound, rate int, d time.Duration, load string) {
	fmt.Fprintf(w, "\nCSR queue tabs (%s, one console behind HAProxy, 12 tabs per person, /csrs?%s): %d writes/s (half creates, half approvals) for %v; load average %s at the start, %s at the end\n",
		binary, queueView, rate, d, load, loadAverage())
	fmt.Fprintf(w, "latency = the write leaving the driver → an event naming its row read by a tab; bytes = event data the tabs read while the driver ran\n\n")
	fmt.Fprintf(w, "| tabs | all connected s | changes got/expected | p50 ms | p99 ms | max ms | bytes per change per tab | MB sent | refetches (p50 / max ms) | RSS MiB before → peak (after) | console CPU s | streams ended early |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rounds {
		per := 0.0
		if r.writes > 0 {
			per = float64(r.bytes) / float64(r.writes*r.tabs)
		}
		fmt.Fprintf(w, "| %d | %.1f | %d/%d | %s | %s | %s | %.0f | %.1f | %d (%s / %s) | %.0f → %.0f (%.0f) | %.1f | %d |\n",
			r.tabs, r.connectAll.Seconds(), r.got, r.expected, ms(r.p50), ms(r.p99), ms(r.max), per, float64(r.bytes)/1e6,
			r.refetches, ms(r.refetchP50), ms(r.refMax), mib(r.rssBefore), mib(r.rssPeak), mib(r.rssAfter), r.cpu, r.ended)
	}
}
