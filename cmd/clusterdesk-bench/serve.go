package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/clusterdesk/clusterdesk/handlers"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
)

// serverInfo is what the serving child tells the parent on its first line.
type serverInfo struct {
	URL     string `json:"url"`
	Stats   string `json:"stats"`
	Session string `json:"session"` // answers a fresh session cookie, "name=value", per GET
	// Published answers the CSR rows messages published so far (publishedLog).
	Published string `json:"published"`
}

// serverStats is what the child's stats endpoint answers.
type serverStats struct {
	Goroutines int        `json:"goroutines"`
	RSSBytes   int64      `json:"rssBytes"`
	HeapBytes  uint64     `json:"heapBytes"`
	CPUSeconds float64    `json:"cpuSeconds"` // user + system time of the whole process since it started
	Live       live.Stats `json:"live"`
}

// serve runs the console the way cmd/clusterdesk wires it (cache, hub, streams,
// handlers) as the devcluster admin, on loopback, until its stdin closes. Its
// own stats are served on a second port, so the parent's clients do not count.
func serve() error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg, _, err := kube.LoadConfig(adminKubeconfig(), "")
	if err != nil {
		return err
	}
	cache, err := kube.NewCache(cfg, log)
	if err != nil {
		return err
	}
	cache.SummarizeDecidedRequests(csr.Summarize) // as the console does
	access, err := kube.NewAccess(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The rounds go to 5,000 tabs and one more: above the console's default
	// per-replica limit, which they measure the cost behind.
	streams := live.NewStreams(live.Options{Log: log, MaxStreams: 10000})
	updates := handlers.NewLiveUpdates(cache, streams)
	// The hub publishes through a log of what it published, which the parent
	// compares with what each tab received.
	plog := newPublishLog(cache, streams)
	hub := live.NewHub(plog.render(updates.Render), plog, live.HubOptions{Log: log})
	cache.OnChange(hub.Notify)
	go hub.Run(ctx)
	go cache.Run(ctx)
	for deadline := time.Now().Add(60 * time.Second); !cache.Ready(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			return errors.New("the cache did not sync within 60 s")
		}
	}

	sessions := auth.NewSessions()

	srv := &http.Server{
		Handler: handlers.New(handlers.Deps{
			Log: log, Cluster: cache, Access: access, Sessions: sessions,
			Logins: auth.NewLoginTokens(func(string) {}), User: "bench", Live: updates,
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	srv.RegisterOnShutdown(streams.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(ln) }()

	statsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	// Profiles of the serving process, for looking into a slow round.
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.Handle("/published", plog)
	mux.Handle("/stats", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("gc") != "" {
			// Twice: objects pooled by sync.Pool (net/http's buffers) survive one cycle.
			runtime.GC()
			debug.FreeOSMemory()
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		_ = json.NewEncoder(w).Encode(serverStats{
			Goroutines: runtime.NumGoroutine(), RSSBytes: rss(), HeapBytes: ms.HeapInuse, CPUSeconds: cpuSeconds(), Live: streams.Stats(),
		})
	}))
	// Every simulated browser signs in on its own, as a person of its own
	// (Sessions.Start is what redeeming a one-time login URL calls): the
	// console allows one user only live.DefaultMaxPerUser tabs, and a real
	// crowd of tabs is many people. Minted here rather than through GET
	// /login because the sign-in limit (rightly) throttles thousands of
	// sign-ins from one address.
	var people atomic.Int64
	mux.HandleFunc("/session", func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		if err := sessions.Start(rec, fmt.Sprintf("bench-%d", people.Add(1))); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		cookies := rec.Result().Cookies()
		if len(cookies) == 0 {
			http.Error(w, "no session cookie", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, cookies[0].Name+"="+cookies[0].Value)
	})
	go func() { _ = http.Serve(statsLn, mux) }()

	statsBase := "http://" + statsLn.Addr().String()
	info := serverInfo{URL: "http://" + ln.Addr().String(), Stats: statsBase + "/stats", Session: statsBase + "/session", Published: statsBase + "/published"}
	if err := json.NewEncoder(os.Stdout).Encode(info); err != nil {
		return err
	}
	// The parent closes stdin when it is done (or dies).
	_, _ = io.Copy(io.Discard, os.Stdin)
	shutdown, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	return srv.Shutdown(shutdown)
}

// rss is the process's resident set size from /proc (Linux).
func rss() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return -1
}

// cpuSeconds is the CPU time (user and system) the process has used: what a
// delivery costs does not depend on what else the machine runs, its latency does.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// adminKubeconfig is the devcluster admin's kubeconfig.
func adminKubeconfig() string {
	dir := os.Getenv("DEVCLUSTER_DIR")
	if dir == "" {
		fmt.Fprintln(os.Stderr, "clusterdesk-bench: DEVCLUSTER_DIR is not set: run it under scripts/with-devcluster.sh (make bench)")
		os.Exit(2)
	}
	return dir + "/kubeconfigs/admin.kubeconfig"
}
