//go:build integration

package handlers

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/metrics"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// attackedConsole is the console in token mode on the devcluster (admin's
// cache, real token reviews, a metrics registry) behind the production
// http.Server on a real port, counting its open connections.
type attackedConsole struct {
	handler http.Handler
	addr    string
	reg     *metrics.Registry
	reviews atomic.Int64 // token reviews sent to the API server
	open    atomic.Int64 // connections the server holds
}

func newAttackedConsole(t *testing.T, limit SignInLimit) *attackedConsole {
	t.Helper()
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cache := syncedCache(t, cfg, log)
	users := strictUsers(t, cfg)
	a := &attackedConsole{reg: metrics.New()}
	review := reviewAs(cfg)
	a.handler = newConsole(t, Deps{Log: log, Cluster: cache, User: "admin", Metrics: a.reg, SignInLimit: limit},
		perUserClients(users), tokenMode(func(ctx context.Context, token string) (kube.Identity, error) {
			a.reviews.Add(1)
			return review(ctx, token)
		})).e
	srv := NewServer(a.handler, DefaultServerTimeouts)
	srv.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			a.open.Add(1)
		case http.StateClosed, http.StateHijacked:
			a.open.Add(-1)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	a.addr = ln.Addr().String()
	return a
}

const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func randomToken(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[rng.IntN(len(letters))]
	}
	return string(b)
}

// hostile is one unauthenticated request as raw HTTP/1.1: a head and, for
// chunked requests, how many body bytes follow.
type hostile struct {
	head string
	body int
}

// hostileRequest is the i-th attack: made-up 20 KB methods, long random
// paths, junk headers and cookies, 1 MiB chunked bodies on POST routes
// (the editor's, whose limit is 6 MiB, and the public sign-in form).
func hostileRequest(rng *rand.Rand, i int, host string) hostile {
	h := "Host: " + host + "\r\n"
	switch i % 5 {
	case 0:
		return hostile{head: randomToken(rng, 20<<10) + " /" + randomToken(rng, 2<<10) + " HTTP/1.1\r\n" + h + "\r\n"}
	case 1:
		var b strings.Builder
		b.WriteString("GET ")
		for range 64 {
			b.WriteString("/" + randomToken(rng, 120))
		}
		b.WriteString("?q=" + randomToken(rng, 500) + " HTTP/1.1\r\n" + h)
		for range 40 {
			b.WriteString("X-" + randomToken(rng, 12) + ": " + randomToken(rng, 400) + "\r\n")
		}
		b.WriteString("Cookie: " + auth.CookieName + "=" + randomToken(rng, 3000) + "; clusterdesk_csrf=" + randomToken(rng, 200) + "\r\n")
		b.WriteString("HX-Request: true\r\nAccept: text/event-stream\r\nX-Forwarded-For: " + randomToken(rng, 300) + "\r\n\r\n")
		return hostile{head: b.String()}
	case 2:
		paths := []string{"/crds/" + randomToken(rng, 40) + "/apply", "/csrs/" + randomToken(rng, 40) + "/approve", "/csrs/bulk", "/logout"}
		return hostile{head: "POST " + paths[i%len(paths)] + " HTTP/1.1\r\n" + h +
			"Content-Type: multipart/form-data; boundary=" + randomToken(rng, 60) + "\r\nTransfer-Encoding: chunked\r\n\r\n", body: 1 << 20}
	case 3:
		return hostile{head: randomToken(rng, 20<<10) + " /crds/x/apply HTTP/1.1\r\n" + h + "Transfer-Encoding: chunked\r\n\r\n", body: 64 << 10}
	default:
		return hostile{head: "POST /login HTTP/1.1\r\n" + h + "Sec-Fetch-Site: same-origin\r\n" +
			"Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n", body: 1 << 20}
	}
}

// send makes one hostile request on its own connection and returns the
// status (0: the server closed without an answer).
func send(t *testing.T, addr string, req hostile, chunk []byte) int {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(clientPatience))
	go func() {
		// Write errors are expected: the server may answer and close first.
		if _, err := io.WriteString(conn, req.head); err != nil {
			return
		}
		for sent := 0; sent < req.body; sent += len(chunk) {
			if _, err := fmt.Fprintf(conn, "%x\r\n%s\r\n", len(chunk), chunk); err != nil {
				return
			}
		}
		if req.body > 0 {
			_, _ = io.WriteString(conn, "0\r\n\r\n")
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode
}

// heapAfterGC is the live heap.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestHostileUnauthenticatedRequestsGrowNothing: 2,000 unauthenticated
// requests built to make the console keep something (a time series per
// made-up method, a buffered body, a kept header) leave the heap, after GC,
// less than 5 MiB larger, and the request metrics with a fixed set of labels.
func TestHostileUnauthenticatedRequestsGrowNothing(t *testing.T) {
	a := newAttackedConsole(t, SignInLimit{})
	rng := rand.New(rand.NewPCG(14, 5))
	chunk := []byte(strings.Repeat("x", 32<<10))
	run := func(from, n int) map[int]int {
		reqs := make([]hostile, n)
		for i := range reqs {
			reqs[i] = hostileRequest(rng, from+i, a.addr)
		}
		var mu sync.Mutex
		codes := map[int]int{}
		next := atomic.Int64{}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
					code := send(t, a.addr, reqs[i], chunk)
					mu.Lock()
					codes[code]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		waitFor(t, "the server to close every connection", clientPatience, func() bool { return a.open.Load() == 0 })
		return codes
	}
	run(0, 50) // warm up: pools, the route table's label set, the limiter's entry
	before := heapAfterGC()
	codes := run(50, 2000)
	after := heapAfterGC()

	growth := int64(after) - int64(before)
	t.Logf("answers %v; heap after GC %.1f MiB → %.1f MiB (%+.2f MiB)", codes,
		float64(before)/(1<<20), float64(after)/(1<<20), float64(growth)/(1<<20))
	if growth >= 5<<20 {
		t.Errorf("2,000 hostile unauthenticated requests grew the heap after GC by %.1f MiB, want < 5 MiB", float64(growth)/(1<<20))
	}
	for code := range codes {
		if code >= 200 && code < 400 {
			t.Errorf("%d hostile requests were answered %d", codes[code], code)
		}
	}
	if a.reviews.Load() > int64(DefaultSignInLimit.Burst)+1 {
		t.Errorf("the hostile sign-ins reached the API server %d times", a.reviews.Load())
	}

	// The request metrics: a fixed set of label values, whatever was sent.
	families, err := a.reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true, metrics.OtherLabel: true}
	series, bad := 0, 0
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "clusterdesk_http_") {
			continue
		}
		for _, m := range f.GetMetric() {
			series++
			for _, l := range m.GetLabel() {
				if len(l.GetValue()) > 64 || (l.GetName() == "method" && !methods[l.GetValue()]) {
					if bad++; bad <= 3 {
						t.Errorf("%s has label %s=%.80q (%d bytes)", f.GetName(), l.GetName(), l.GetValue(), len(l.GetValue()))
					}
				}
			}
		}
	}
	t.Logf("%d request metric series, %d label values a client chose", series, bad)
	if series > 40 {
		t.Errorf("%d request metric series after 2,050 hostile requests, want a handful (at most 40)", series)
	}
}

// TestSignInFloodOnTheDevcluster: 1,000 sign-ins with made-up tokens from one
// client over a real connection, whatever X-Forwarded-For it writes (no
// proxy is trusted). Past the burst the client's attempts are checked one at
// a time (handlers/signin/limit.go: a valid token must still be accepted, so each is
// a SelfSubjectReview the API server refuses); a sequential flood is never
// refused. Another client signs in with a real token meanwhile.
func TestSignInFloodOnTheDevcluster(t *testing.T) {
	limit := frozenLimit(10)
	a := newAttackedConsole(t, limit)
	client := &http.Client{
		Timeout:       clientPatience,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	// The flood replays one sign-in form (its pre-session cookie and CSRF
	// token), as a script would: the limit, not the CSRF check, must stop it.
	cookies, csrf := signInForm(t, a.handler)
	codes := map[int]int{}
	start := time.Now()
	for i := range 1000 {
		req, _ := http.NewRequest(http.MethodPost, "http://"+a.addr+"/login",
			strings.NewReader(url.Values{"token": {"made-up-token-" + strconv.Itoa(i)}, "_csrf": {csrf}}.Encode()))
		for _, c := range cookies {
			req.AddCookie(c)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("X-Forwarded-For", "198.51.100."+strconv.Itoa(i%250))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes[resp.StatusCode]++
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
	}
	t.Logf("answers %v; token reviews sent to the API server: %d in %v", codes, a.reviews.Load(), time.Since(start))
	if n := a.reviews.Load(); n != 1000 {
		t.Errorf("1,000 sign-in attempts one after another sent %d token reviews to the API server, want each checked", n)
	}
	if codes[http.StatusUnauthorized] != 1000 {
		t.Errorf("answers %v, want 1000×401 (the API server refused each)", codes)
	}

	// Someone else, from another address, with a real token.
	r := tokenSignInRequest(t, a.handler, staticUser(t, testcluster.Auditor).token)
	r.RemoteAddr = "192.0.2.50:1234"
	rec := httptest.NewRecorder()
	a.handler.ServeHTTP(rec, r)
	if rec.Code != http.StatusSeeOther {
		t.Errorf("another client's sign-in with a real token: status %d, want 303", rec.Code)
	}
}
