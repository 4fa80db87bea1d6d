package handlers

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// frozenLimit is a sign-in limit on a clock that does not move, so what a
// flood gets through is exactly the burst, however long the test takes.
func frozenLimit(burst int) SignInLimit {
	now := time.Now()
	return SignInLimit{Every: time.Minute, Burst: burst, Clients: 64, Now: func() time.Time { return now }}
}

// tokenLoginRequest is a browser's post of the sign-in form (with the form's
// pre-session cookie and CSRF token, fetched by an uncounted GET /login) from
// the client address remote.
func tokenLoginRequest(t testing.TB, h http.Handler, token, remote string) *http.Request {
	r := tokenSignInRequest(t, h, token)
	r.RemoteAddr = remote
	return r
}

// TestTokenSignInFloodIsLimitedPerClient: 1,000 sign-ins with bad tokens from
// one client reach the token review only for the burst; the rest are 429 with
// Retry-After and a page, whatever X-Forwarded-For claims. Another client
// still signs in.
func TestTokenSignInFloodIsLimitedPerClient(t *testing.T) {
	var reviews atomic.Int64
	sessions := auth.NewSessions()
	gate := &auth.Gate{Mode: auth.ModeToken, Sessions: sessions}
	e := New(Deps{
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Cluster: emptyCluster{}, Access: denyAll{},
		Sessions: sessions, Gate: gate, User: "console", SignInLimit: frozenLimit(10),
		TokenReview: func(ctx context.Context, token string) (kube.Identity, error) {
			reviews.Add(1)
			return reviewTokens(ctx, token)
		},
	})
	codes := map[int]int{}
	for i := range 1000 {
		r := tokenLoginRequest(t, e, "bad-token-"+strconv.Itoa(i), "203.0.113.9:40000")
		// A client cannot pose as many by naming other addresses.
		r.Header.Set("X-Forwarded-For", "198.51.100."+strconv.Itoa(i%250))
		r.Header.Set("X-Real-IP", "198.51.100."+strconv.Itoa(i%250))
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, r)
		codes[rec.Code]++
		if rec.Code == http.StatusTooManyRequests {
			if ra, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || ra < 1 {
				t.Fatalf("429 with Retry-After %q", rec.Header().Get("Retry-After"))
			}
			if !strings.Contains(rec.Body.String(), "Too many sign-in attempts") {
				t.Fatalf("429 page does not say why:\n%s", rec.Body.String())
			}
		}
	}
	if n := reviews.Load(); n != 10 {
		t.Errorf("1,000 sign-in attempts from one client reached the token review %d times, want the burst of 10", n)
	}
	if codes[http.StatusTooManyRequests] != 990 || codes[http.StatusUnauthorized] != 10 {
		t.Errorf("answers %v, want 10×401 then 990×429", codes)
	}

	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, tokenLoginRequest(t, e, goodToken, "192.0.2.77:5555"))
	if rec.Code != http.StatusSeeOther {
		t.Errorf("another client's sign-in: status %d, want 303", rec.Code)
	}
}

// TestLocalLoginURLFloodIsLimited: guessing local mode's one-time token is
// limited the same way; while a client is limited even the right token waits.
func TestLocalLoginURLFloodIsLimited(t *testing.T) {
	var token string
	sessions := auth.NewSessions()
	e := New(Deps{
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Cluster: emptyCluster{}, Access: denyAll{},
		Sessions: sessions, Logins: auth.NewLoginTokens(func(tok string) { token = tok }), User: "console",
		SignInLimit: frozenLimit(5),
	})
	get := func(tok string) int {
		r := httptest.NewRequest(http.MethodGet, "/login?token="+tok, nil)
		r.RemoteAddr = "[2001:db8:1:2:3::4]:4444"
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, r)
		return rec.Code
	}
	codes := map[int]int{}
	for i := range 1000 {
		codes[get("guess"+strconv.Itoa(i))]++
	}
	if codes[http.StatusUnauthorized] != 5 || codes[http.StatusTooManyRequests] != 995 {
		t.Errorf("answers to 1,000 guesses %v, want 5×401 then 995×429", codes)
	}
	if c := get(token); c != http.StatusTooManyRequests {
		t.Errorf("the right token from a limited client: %d, want 429", c)
	}
	// The login page itself (no token) is not an attempt.
	r := httptest.NewRequest(http.MethodGet, "/login", nil)
	r.RemoteAddr = "[2001:db8:1:2:3::4]:4444"
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		t.Errorf("GET /login without a token from a limited client: %d, want 200", rec.Code)
	}
}

// TestSuccessfulSignInsAreNotLimited: a person (or a test suite) signing in
// 100 browsers from one address with one-time login URLs is never held up:
// only failed attempts spend the budget. One failure after them still counts.
func TestSuccessfulSignInsAreNotLimited(t *testing.T) {
	var token string
	// A clock that moves a millisecond per reading (refills are an hour away):
	// a frozen clock would hide a refund that only works at the instant of
	// the attempt.
	clock := time.Now()
	limit := SignInLimit{Every: time.Hour, Burst: 2, Clients: 64, Now: func() time.Time { clock = clock.Add(time.Millisecond); return clock }}
	e := New(Deps{
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Cluster: emptyCluster{}, Access: denyAll{},
		Sessions: auth.NewSessions(), Logins: auth.NewLoginTokens(func(tok string) { token = tok }), User: "console",
		SignInLimit: limit,
	})
	get := func(tok string) int {
		r := httptest.NewRequest(http.MethodGet, "/login?token="+tok, nil)
		r.RemoteAddr = "198.51.100.7:4444"
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, r)
		return rec.Code
	}
	for i := range 100 {
		if c := get(token); c != http.StatusSeeOther {
			t.Fatalf("sign-in %d with a fresh login URL: status %d, want 303", i+1, c)
		}
	}
	if a, b, c := get("guess-1"), get("guess-2"), get("guess-3"); a != http.StatusUnauthorized || b != http.StatusUnauthorized || c != http.StatusTooManyRequests {
		t.Errorf("three guesses after 100 sign-ins: %d %d %d, want 401 401 429 (the burst of 2 is for failures)", a, b, c)
	}
}

// TestSignInLimiterMemoryIsBounded: a client spraying addresses does not
// grow the limiter past its Clients.
func TestSignInLimiterMemoryIsBounded(t *testing.T) {
	l := newSignInLimiter(SignInLimit{Every: time.Minute, Burst: 1, Clients: 100})
	for i := range 100000 {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		l.take(netip.PrefixFrom(a, 32))
	}
	if n := l.clients.Len(); n > 100 {
		t.Fatalf("limiter remembers %d clients, want at most 100", n)
	}
}

// TestClientOfIgnoresForwardingHeaders: the client is the connection's
// address (IPv6 by /64), never a header.
func TestClientOfIgnoresForwardingHeaders(t *testing.T) {
	for _, tt := range []struct{ remote, want string }{
		{"203.0.113.9:1234", "203.0.113.9/32"},
		{"[::ffff:203.0.113.9]:1234", "203.0.113.9/32"},
		{"[2001:db8:1:2:aaaa::1]:1234", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:bbbb::9]:80", "2001:db8:1:2::/64"},
		{"garbage", "invalid Prefix"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/login", nil)
		r.RemoteAddr = tt.remote
		r.Header.Set("X-Forwarded-For", "1.2.3.4")
		if got := clientOf(r).String(); got != tt.want {
			t.Errorf("clientOf(%s) = %s, want %s", tt.remote, got, tt.want)
		}
	}
}

// TestEveryLoginRequestButThePageIsAnAttempt: other methods and HEAD with a
// token spend the budget too; the bare page does not.
func TestEveryLoginRequestButThePageIsAnAttempt(t *testing.T) {
	e := echo.New()
	for _, tt := range []struct {
		method, target string
		want           bool
	}{
		{http.MethodGet, "/login", false},
		{http.MethodHead, "/login", false},
		{http.MethodGet, "/login?token=x", true},
		{http.MethodGet, "/login?token=", true},
		{http.MethodHead, "/login?token=x", true},
		{http.MethodPost, "/login", true},
		{"PROPFIND", "/login", true},
		{http.MethodPost, "/logout", false},
	} {
		c := e.NewContext(httptest.NewRequest(tt.method, tt.target, nil), httptest.NewRecorder())
		c.SetPath(strings.SplitN(tt.target, "?", 2)[0])
		if got := isSignInAttempt(c); got != tt.want {
			t.Errorf("%s %s: attempt = %v, want %v", tt.method, tt.target, got, tt.want)
		}
	}
}

// TestSignInBodyIsSmall: the public sign-in form is read before anyone is
// known, so its body gets loginBody (64 KiB), not maxBody, also when chunked.
func TestSignInBodyIsSmall(t *testing.T) {
	var reviews atomic.Int64
	sessions := auth.NewSessions()
	e := New(Deps{
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Cluster: emptyCluster{}, Access: denyAll{},
		Sessions: sessions, Gate: &auth.Gate{Mode: auth.ModeToken, Sessions: sessions}, User: "console",
		TokenReview: func(ctx context.Context, token string) (kube.Identity, error) {
			reviews.Add(1)
			return reviewTokens(ctx, token)
		},
	})
	body := "token=" + strings.Repeat("a", 100<<10)
	r := tokenLoginRequest(t, e, "", "203.0.113.9:1")
	r.Body, r.ContentLength = io.NopCloser(strings.NewReader(body)), -1 // chunked: no length to check first
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, r)
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "larger than "+loginBody) {
		t.Errorf("a 100 KiB chunked sign-in body: status %d, want 413 saying %s", rec.Code, loginBody)
	}
	if reviews.Load() != 0 {
		t.Error("the oversized sign-in reached the token review")
	}
}

// TestConcurrentGuessesCannotOvershoot: attempts in flight count against the
// budget before they fail, so a burst of 2 lets 2 concurrent guesses in, not
// every one that arrives before the first is answered.
func TestConcurrentGuessesCannotOvershoot(t *testing.T) {
	l := newSignInLimiter(frozenLimit(2))
	client := netip.MustParsePrefix("203.0.113.0/32")
	var dones []func(bool)
	for range 50 {
		if done, ok, _ := l.take(client); ok {
			dones = append(dones, done)
		}
	}
	if len(dones) != 2 {
		t.Fatalf("%d of 50 concurrent attempts let in with a burst of 2", len(dones))
	}
	for _, done := range dones {
		done(true)
	}
	if _, ok, wait := l.take(client); ok || wait <= 0 {
		t.Errorf("after 2 failures the bucket is empty: ok=%v wait=%v", ok, wait)
	}
}
