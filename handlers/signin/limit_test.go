package signin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/auth"
)

// frozenLimit is a sign-in limit on a clock that does not move, so what a
// flood gets through is exactly the burst, however long the test takes.
func frozenLimit(burst int) SignInLimit {
	now := time.Now()
	return SignInLimit{Every: time.Minute, Burst: burst, Clients: 64, Now: func() time.Time { return now }}
}

// TestOnlyFailuresSpendTheBudget: 100 successes spend nothing; a burst of 2
// failures spends it all.
func TestOnlyFailuresSpendTheBudget(t *testing.T) {
	// A clock that moves a millisecond per reading (refills are an hour away):
	// a frozen clock would hide a refund that only works at the instant of
	// the attempt.
	clock := time.Now()
	l := newSignInLimiter(SignInLimit{Every: time.Hour, Burst: 2, Clients: 64, Now: func() time.Time { clock = clock.Add(time.Millisecond); return clock }})
	client := netip.MustParsePrefix("198.51.100.7/32")
	for i := range 100 {
		done, lane := l.take(client)
		if lane != nil {
			t.Fatalf("attempt %d after %d successes is over budget", i+1, i)
		}
		done(false)
	}
	for i := range 2 {
		done, lane := l.take(client)
		if lane != nil {
			t.Fatalf("failure %d is over budget after 100 successes", i+1)
		}
		done(true)
	}
	if _, lane := l.take(client); lane == nil {
		t.Error("after 2 failures with a burst of 2, the client is still within its budget")
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

// TestClientOfIgnoresForwardingHeaders: without trusted proxies the client
// is the connection's address (IPv6 by /64), never a header.
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
		r.Header.Set("X-Real-IP", "1.2.3.4")
		if got := clientOf(r, nil).String(); got != tt.want {
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

// TestConcurrentGuessesCannotOvershoot: attempts in flight count against the
// budget before they fail, so a burst of 2 lets 2 concurrent guesses in
// beside each other; every other one takes the client's lane, one at a time.
func TestConcurrentGuessesCannotOvershoot(t *testing.T) {
	l := newSignInLimiter(frozenLimit(2))
	client := netip.MustParsePrefix("203.0.113.0/32")
	var dones []func(bool)
	lanes := map[chan struct{}]int{}
	for range 50 {
		done, lane := l.take(client)
		if lane == nil {
			dones = append(dones, done)
		} else {
			lanes[lane]++
		}
	}
	if len(dones) != 2 || len(lanes) != 1 {
		t.Fatalf("%d of 50 concurrent attempts let in beside each other with a burst of 2, the rest in %d lanes", len(dones), len(lanes))
	}
	for lane := range lanes {
		lane <- struct{}{} // one holds it
		select {
		case lane <- struct{}{}:
			t.Error("two over-budget attempts held the lane at once")
		default:
		}
	}
	for _, done := range dones {
		done(true)
	}
	if _, lane := l.take(client); lane == nil {
		t.Error("after 2 failures the bucket is empty, but an attempt was let in beside the lane")
	}
}

// TestOnlyWrongOIDCCredentialsCount: of the OIDC callback's failures, only a
// code or ID token that does not verify, for a sign-in this browser started,
// spends the budget.
func TestOnlyWrongOIDCCredentialsCount(t *testing.T) {
	for kind, want := range map[auth.OIDCErrorKind]bool{
		auth.OIDCExchangeFailed: true, auth.OIDCTokenInvalid: true, auth.OIDCNonceMismatch: true,
		auth.OIDCStateMissing: false, auth.OIDCStateMismatch: false, auth.OIDCProviderError: false,
		auth.OIDCDenied: false, auth.OIDCIssuerUnreachable: false, auth.OIDCRefreshFailed: false,
	} {
		if got := wrongOIDCCredential(&auth.OIDCError{Kind: kind}); got != want {
			t.Errorf("%s counts: %v, want %v", kind, got, want)
		}
	}
	if wrongOIDCCredential(context.DeadlineExceeded) {
		t.Error("an error that is no OIDC step's counts")
	}
}
