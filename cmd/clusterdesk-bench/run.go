package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// round is one measured run of the driver with n clients.
type round struct {
	label   string
	clients int
	writes  int
	// offered is the writes the driver was asked for (rate × the time it
	// drove): a driver starved of CPU drives fewer, and a p99 measured at a
	// lower write rate is not comparable.
	offered          int
	expected, got    int // rows messages owed to the tabs, and read (tally)
	tally            tally
	p50, p99, max    time.Duration
	spread50         time.Duration // per write: last client's latency - first client's
	spread99         time.Duration
	peakGoroutines   int
	peakRSS          int64
	watchAll, watchC int // API server WATCH requests during the round (all, CSRs)
	stalledGone      time.Duration
	stalled          bool
	stalledQueued    [2]int64 // bytes in its server send queue and client receive queue at the end
	// What one connection costs the server, whatever the machine's load: the
	// difference between before the round's clients connected and once they
	// all idle subscribed (both after GC), divided by the clients.
	goroutinesPerConn, rssPerConn, heapPerConn float64
	// Server CPU seconds and SSE flushes while the driver ran and the events
	// arrived, per event delivered.
	cpuSeconds float64
	// The bench process's CPU seconds (the tabs reading and counting, and the
	// driver) over the same window, and the machine's busy cores then.
	benchCPU, busyCores float64
	flushes             int64
	sent                int64 // SSE events queued to the clients (one may carry several writes' rows)
}

type bench struct {
	rate      int
	duration  time.Duration
	profile   string
	loadStart string
	// tabsProfile: where the largest round writes this process's CPU profile.
	tabsProfile string
	hc          *http.Client
	cs          kubernetes.Interface
	info        serverInfo
	board       *board
	names       []string
	seq         int64
}

func run(args []string) error {
	fs := flag.NewFlagSet("clusterdesk-bench", flag.ContinueOnError)
	rate := fs.Int("rate", 20, "CSR annotation patches per second")
	duration := fs.Duration("duration", 15*time.Second, "how long the driver writes in each round")
	counts := fs.String("clients", "1,100,1000,5000", "client counts (simulated browsers, each its own session), one round each; the last one is repeated with a stalled client")
	withStalled := fs.Bool("stalled", true, "repeat the last round with a client that reads nothing")
	profile := fs.String("profile", "", "write a CPU profile of the server during the largest round to this file")
	tabsProfile := fs.String("tabs-profile", "", "write a CPU profile of this process (the simulated tabs and the driver) during the largest round to this file")
	replicas := fs.String("replicas", "", "instead: run -binary as this many replicas behind HAProxy, one round per count (e.g. 1,3), each with the first -clients count of tabs spread over them")
	binary := fs.String("binary", "bin/clusterdesk", "with -replicas or -queue-tabs: the console binary")
	queueTabs := fs.String("queue-tabs", "", "instead: the CSR queue round, one per count of tabs (e.g. 200,1000) on the Pending tab of -binary, -rate writes/s (creates and approvals) for -duration")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var ns []int
	for _, f := range strings.Split(*counts, ",") {
		var n int
		if _, err := fmt.Sscan(f, &n); err != nil || n < 1 {
			return fmt.Errorf("-clients: %q", f)
		}
		ns = append(ns, n)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", adminKubeconfig())
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(*rate*2), *rate*2
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if *queueTabs != "" {
		var qs []int
		for _, f := range strings.Split(*queueTabs, ",") {
			var n int
			if _, err := fmt.Sscan(f, &n); err != nil || n < 1 {
				return fmt.Errorf("-queue-tabs: %q", f)
			}
			qs = append(qs, n)
		}
		cfg.QPS, cfg.Burst = float32(*rate*3), *rate*3 // an approval reads, then writes
		if cs, err = kubernetes.NewForConfig(cfg); err != nil {
			return err
		}
		return runQueueTabs(ctx, cs, *binary, qs, *rate, *duration)
	}
	if *replicas != "" {
		var rs []int
		for _, f := range strings.Split(*replicas, ",") {
			var n int
			if _, err := fmt.Sscan(f, &n); err != nil || n < 1 {
				return fmt.Errorf("-replicas: %q", f)
			}
			rs = append(rs, n)
		}
		return runReplicas(ctx, cs, *binary, rs, ns[0], *rate, *duration)
	}

	watchBefore, csrWatchBefore, err := watches(ctx, cs)
	if err != nil {
		return fmt.Errorf("apiserver /metrics: %w", err)
	}

	// The console, in a child process so its goroutines and memory are its own.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.CommandContext(ctx, self, "serve")
	child.Stderr = os.Stderr
	stdin, err := child.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		return err
	}
	if err := child.Start(); err != nil {
		return err
	}
	defer func() {
		stdin.Close()
		_ = child.Wait()
	}()
	b := &bench{rate: *rate, duration: *duration, cs: cs, profile: *profile, tabsProfile: *tabsProfile, loadStart: loadAverage()}
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("the serving child did not start: %w", err)
	}
	if err := json.Unmarshal(line, &b.info); err != nil {
		return fmt.Errorf("the serving child said %q: %w", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	b.hc = &http.Client{Transport: &http.Transport{
		Proxy:               nil, // loopback only
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: -1,
		DisableCompression:  true,
	}}

	b.names, err = createCSRs(ctx, cs, fmt.Sprintf("bench-%d", time.Now().Unix()), 20)
	defer deleteCSRs(cs, b.names)
	if err != nil {
		return fmt.Errorf("creating the bench CSRs: %w", err)
	}
	b.board = newBoard(b.names)
	// Let the console's cache see them before the baseline is taken.
	time.Sleep(2 * time.Second)
	base, err := b.statsAfterGC()
	if err != nil {
		return err
	}

	fmt.Fprintf(os.Stderr, "bench: console up (%d goroutines, %.1f MiB RSS); %d CSRs; %d patches/s for %v per round\n",
		base.Goroutines, mib(base.RSSBytes), len(b.names), b.rate, b.duration)
	var rounds []round
	for i, n := range ns {
		last := i == len(ns)-1
		profile, tabsProfile := "", ""
		if last {
			profile, tabsProfile = b.profile, b.tabsProfile
		}
		r, err := b.round(ctx, fmt.Sprint(n), n, false, profile, tabsProfile)
		if err != nil {
			return err
		}
		rounds = append(rounds, r)
		if last && *withStalled {
			r, err := b.round(ctx, fmt.Sprintf("%d + 1 stalled", n), n, true, "", "")
			if err != nil {
				return err
			}
			rounds = append(rounds, r)
		}
	}

	// After every client has left: back to the baseline?
	var after serverStats
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		if after, err = b.statsAfterGC(); err != nil {
			return err
		}
		if after.Goroutines <= base.Goroutines && after.Live.Connections == 0 || time.Now().After(deadline) {
			break
		}
	}
	report(os.Stdout, b, rounds, base, after, watchBefore, csrWatchBefore)
	// A healthy tab misses no event (a slow one is cut off, not skipped): a
	// shortfall is a broken live path, whatever the timings say.
	for _, r := range rounds {
		if !r.tally.complete() || r.writes == 0 || r.tally.messages == 0 {
			return fmt.Errorf("round %s: %d of %d events arrived (%d read twice); %d of %d writes never published",
				r.label, r.got, r.expected, r.tally.dupes, r.tally.uncovered, r.tally.writes)
		}
	}
	return nil
}

// round connects n clients (and a stalled one), drives writes, and measures.
func (b *bench) round(ctx context.Context, label string, n int, withStalled bool, profile, tabsProfile string) (round, error) {
	r := round{label: label, clients: n, stalled: withStalled}
	before, err := b.statsAfterGC()
	if err != nil {
		return r, err
	}
	fmt.Fprintf(os.Stderr, "bench: round %s: connecting\n", label)
	clients, err := connect(b.info.URL, sessionSigner(b.hc, b.info.Session), b.board, n)
	if err != nil {
		return r, err
	}
	defer closeAll(clients)
	idle, err := b.statsAfterGC()
	if err != nil {
		return r, err
	}
	r.goroutinesPerConn = float64(idle.Goroutines-before.Goroutines) / float64(n)
	r.rssPerConn = float64(idle.RSSBytes-before.RSSBytes) / float64(n)
	r.heapPerConn = (float64(idle.HeapBytes) - float64(before.HeapBytes)) / float64(n)
	var stalled net.Conn
	if withStalled {
		if stalled, err = stall(b.hc, b.info.URL, b.info.Session); err != nil {
			return r, err
		}
		defer stalled.Close()
	}

	// The round's writes and messages: from here on.
	firstWrite := b.board.writes()
	firstSeq, err := b.nextSeq()
	if err != nil {
		return r, err
	}

	// Sample the server while the driver runs.
	driving, err := b.stats()
	if err != nil {
		return r, err
	}
	window := startCPUWindow()
	start := time.Now()
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			st, err := b.stats()
			if err != nil {
				continue
			}
			r.peakGoroutines = max(r.peakGoroutines, st.Goroutines)
			r.peakRSS = max(r.peakRSS, st.RSSBytes)
			if withStalled && r.stalledGone == 0 && st.Live.Connections <= n {
				r.stalledGone = time.Since(start)
			}
		}
	}()
	if profile != "" {
		go b.saveProfile(profile, b.duration*2/3)
	}
	if tabsProfile != "" {
		stopTabsProfile, err := startSelfProfile(tabsProfile)
		if err != nil {
			close(stop)
			return r, err
		}
		defer stopTabsProfile()
	}
	fmt.Fprintf(os.Stderr, "bench: round %s: driving\n", label)
	driveStart := time.Now()
	// With a stalled client the round goes on (up to 30 s) until the server
	// has cut it off: its TCP buffers take a while to fill at this rate.
	for {
		w, err := drive(ctx, b.cs, b.board, b.names, &b.seq, b.rate, min(b.duration, 5*time.Second))
		r.writes += w
		if err != nil {
			close(stop)
			return r, fmt.Errorf("driver: %w", err)
		}
		elapsed := time.Since(start)
		if elapsed >= b.duration && (!withStalled || stalledGone(b, n) || elapsed > 30*time.Second) {
			break
		}
	}
	r.offered = int(float64(b.rate) * time.Since(driveStart).Seconds())
	if stalled != nil && !stalledGone(b, n) {
		r.stalledQueued[0], r.stalledQueued[1], _ = queued(stalled)
	}
	if r.watchAll, r.watchC, err = watches(ctx, b.cs); err != nil {
		close(stop)
		return r, err
	}
	// Give the last events time to arrive, then count.
	// (10 s: at thousands of tabs on a busy 2-core machine the fan-out runs
	// seconds behind, and a late event is a latency to report, not a loss.)
	var t tally
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		// The full count copies every read of every tab: only once the reads
		// add up, so the count does not take the CPU the fan-out needs.
		if owed, err := b.owed(firstSeq); err != nil || reads(clients) < owed*len(clients) && time.Now().Before(deadline) {
			continue
		}
		if t, err = b.tally(clients, firstWrite, firstSeq); err != nil {
			close(stop)
			return r, err
		}
		if t.complete() || time.Now().After(deadline) {
			break
		}
	}
	close(stop)
	<-sampled
	if delivered, err := b.stats(); err == nil {
		r.cpuSeconds = delivered.CPUSeconds - driving.CPUSeconds
		r.benchCPU, r.busyCores = window.end()
		r.flushes = delivered.Live.Flushes - driving.Live.Flushes
		r.sent = delivered.Live.Sent - driving.Live.Sent
	}

	closeAll(clients)
	r.tally = t
	r.expected, r.got = t.expected, t.got
	r.p50, r.p99, r.max = percentiles(t.lat)
	r.spread50, r.spread99, _ = percentiles(t.spread)
	time.Sleep(time.Second) // let the server notice the departures before the next round
	return r, nil
}

// percentiles returns p50, p99 and the maximum of ds (sorting it).
func percentiles(ds []time.Duration) (p50, p99, top time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ds)
	return ds[len(ds)*50/100], ds[min(len(ds)-1, len(ds)*99/100)], ds[len(ds)-1]
}

// nextSeq is the sequence the next published message will have.
func (b *bench) nextSeq() (uint64, error) {
	var l publishedLog
	if err := b.getJSON(b.info.Published, &l); err != nil {
		return 0, err
	}
	if n := len(l.Messages); n > 0 {
		return l.Messages[n-1].Seq + 1, nil
	}
	return 0, nil
}

// owed is how many rows messages were published from firstSeq on.
func (b *bench) owed(firstSeq uint64) (int, error) {
	var l publishedLog
	if err := b.getJSON(b.info.Published, &l); err != nil {
		return 0, err
	}
	n := 0
	for _, m := range l.Messages {
		if m.Seq >= firstSeq {
			n++
		}
	}
	return n, nil
}

// reads counts the rows events the clients have read so far.
func reads(cs []*client) int {
	n := 0
	for _, c := range cs {
		n += int(c.reads.Load())
	}
	return n
}

// tally counts the round so far: the writes from the firstWrite-th on, the
// messages published from firstSeq on, what each client read.
func (b *bench) tally(clients []*client, firstWrite int, firstSeq uint64) (tally, error) {
	var l publishedLog
	if err := b.getJSON(b.info.Published, &l); err != nil {
		return tally{}, err
	}
	if l.Ambiguous > 0 {
		return tally{}, fmt.Errorf("the publish log could not tell %d publishes' ids apart (another publisher in between)", l.Ambiguous)
	}
	tabs := make([]tabLog, len(clients))
	for i, c := range clients {
		c.mu.Lock()
		tabs[i] = tabLog{hello: c.tab.hello, got: append([]receipt(nil), c.tab.got...)}
		c.mu.Unlock()
	}
	return count(b.board.writesSince(firstWrite), b.names, l.Messages, firstSeq, tabs), nil
}

// received counts the events the clients have matched so far.
func received(cs []*client) int {
	n := 0
	for _, c := range cs {
		n += int(c.got.Load())
	}
	return n
}

// saveProfile writes a CPU profile of the serving process.
func (b *bench) saveProfile(path string, d time.Duration) {
	url := strings.TrimSuffix(b.info.Stats, "/stats") + fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(d.Seconds()))
	resp, err := b.hc.Get(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: profile:", err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: profile:", err)
		return
	}
	defer f.Close()
	_, _ = io.Copy(f, resp.Body)
}

// stalledGone reports whether the server is down to the n healthy clients.
func stalledGone(b *bench, n int) bool {
	st, err := b.stats()
	return err == nil && st.Live.Connections <= n
}

func (b *bench) stats() (serverStats, error) { return b.get(b.info.Stats) }

// statsAfterGC collects garbage and returns freed memory to the OS first, so
// RSS shows what the server keeps rather than what the runtime has not yet
// handed back.
func (b *bench) statsAfterGC() (serverStats, error) { return b.get(b.info.Stats + "?gc=1") }

func (b *bench) get(url string) (serverStats, error) {
	var st serverStats
	return st, b.getJSON(url, &st)
}

func (b *bench) getJSON(url string, v any) error {
	resp, err := b.hc.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// loadAverage is the 1-minute load average: the other work the machine was doing.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(raw))[0]
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

func report(w io.Writer, b *bench, rounds []round, base, after serverStats, watchBefore, csrWatchBefore int) {
	fmt.Fprintf(w, "\nclusterdesk live updates: %d CSR annotation patches/s for %v per round, loopback, GOMAXPROCS=%d\n", b.rate, b.duration, runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "latency = the patch request leaving the driver → the event's first line read by a client; machine load average %s at the start, %s at the end\n\n", b.loadStart, loadAverage())
	fmt.Fprintf(w, "deliveries = the CSR rows messages published in the round, each owed to every tab subscribed before it (read/owed, by event id); writes driven/offered = the patches the driver sent / the rate times the time it drove (a driver short of CPU sends fewer: compare p99s at equal rates); published = driven writes a published message carries\n\n")
	fmt.Fprintf(w, "| clients | deliveries read/owed | writes driven/offered | writes published | p50 ms | p99 ms | max ms | fan-out spread p50/p99 ms | server goroutines (peak) | server RSS MiB (peak) | API WATCH requests: all (CSR) |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rounds {
		fmt.Fprintf(w, "| %s | %d/%d | %d/%d | %d/%d | %s | %s | %s | %s/%s | %d | %.1f | %d (%d) |\n",
			r.label, r.got, r.expected, r.writes, r.offered, r.tally.writes-r.tally.uncovered, r.tally.writes, ms(r.p50), ms(r.p99), ms(r.max), ms(r.spread50), ms(r.spread99), r.peakGoroutines, mib(r.peakRSS), r.watchAll, r.watchC)
	}
	fmt.Fprintf(w, "\nWhat the server spends, whatever the load: per connection idle (subscribed, after GC), and per 1,000 events delivered while the driver ran (its CPU includes the cache and the rendering, once per write); beside it the bench process's (the simulated tabs reading and counting every event, and the driver) and how many of the machine's cores were busy meanwhile, everything included\n\n")
	fmt.Fprintf(w, "| clients | goroutines/conn | RSS KiB/conn | heap KiB/conn | CPU s per 1,000 events | SSE events sent | flushes per SSE event | tabs' CPU s per 1,000 events | machine busy cores of %d |\n", runtime.NumCPU())
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rounds {
		perK, perEvent, tabsPerK := 0.0, 0.0, 0.0
		if r.got > 0 {
			perK = r.cpuSeconds * 1000 / float64(r.got)
			tabsPerK = r.benchCPU * 1000 / float64(r.got)
		}
		if r.sent > 0 {
			perEvent = float64(r.flushes) / float64(r.sent)
		}
		fmt.Fprintf(w, "| %s | %.2f | %.1f | %.1f | %.4f | %d | %.2f | %.4f | %.2f |\n", r.label, r.goroutinesPerConn, r.rssPerConn/1024, r.heapPerConn/1024, perK, r.sent, perEvent, tabsPerK, r.busyCores)
	}
	fmt.Fprintf(w, "\nserver before any client: %d goroutines, %.1f MiB RSS, %.1f MiB heap; after all clients left: %d goroutines, %.1f MiB RSS, %.1f MiB heap (after GC), %d connections, %d evicted in all\n",
		base.Goroutines, mib(base.RSSBytes), mib(int64(base.HeapBytes)), after.Goroutines, mib(after.RSSBytes), mib(int64(after.HeapBytes)), after.Live.Connections, after.Live.Evicted)
	fmt.Fprintf(w, "API server WATCH requests before clusterdesk started: %d (CSR %d); clusterdesk holds the difference: ", watchBefore, csrWatchBefore)
	for i, r := range rounds {
		if i > 0 {
			fmt.Fprint(w, ", ")
		}
		fmt.Fprintf(w, "%d with %s clients", r.watchAll-watchBefore, r.label)
	}
	fmt.Fprintln(w)
	for _, r := range rounds {
		if r.stalled {
			if r.stalledGone > 0 {
				fmt.Fprintf(w, "stalled client: cut off %.1f s into its round\n", r.stalledGone.Seconds())
			} else {
				fmt.Fprintf(w, "stalled client: still connected when its round ended; its TCP buffers held %.0f KiB (server send queue %.0f KiB, client receive queue %.0f KiB) ; no write to it had blocked long enough to fill its queue (56 events) or reach the 10 s write deadline\n",
					float64(r.stalledQueued[0]+r.stalledQueued[1])/1024, float64(r.stalledQueued[0])/1024, float64(r.stalledQueued[1])/1024)
			}
		}
	}
}
