package signin

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// LoginBody bounds the sign-in form's body: a bearer token (maxTokenLen,
// 16 KiB) and a CSRF token, percent-encoded. It is read before anyone is
// known (handlers/edit_limit.go installs the limits).
const LoginBody = "64KiB"

// SignInLimit is how many failed sign-ins one client address may make: Burst
// at once, then one per Every. Only a presented credential that turns out
// wrong is a failure (failedSignIn): a bad token, a wrong one-time login URL,
// an OIDC code or ID token that does not verify for a sign-in this console
// started. Successes, the login page, and answers refused before any
// credential is checked (no OIDC sign-in under way, CSRF, an empty form)
// cost nothing.
//
// An address over its budget is not shut out: its attempts are checked one at
// a time, in arrival order (signInClient.lane), so a valid credential is
// still accepted while a flood from that address gets one check at a time.
// Refusing them outright would let anyone sharing the address (an office's
// NAT, or a browser tab made to load login URLs) lock its people out.
type SignInLimit struct {
	Every time.Duration
	Burst int
	// Clients is how many client addresses are remembered. When more try,
	// the one heard from longest ago is forgotten, so spraying addresses
	// cannot grow memory; a forgotten client starts again with a full burst,
	// so a client whose bucket has refilled loses nothing by being forgotten.
	Clients int
	// LaneWait is how long an attempt from an address over its budget waits
	// for the attempts ahead of it before it is answered 429.
	LaneWait time.Duration
	// TrustedProxies are the balancers and Ingress controllers in front of
	// the console: from them, the client is read from X-Forwarded-For
	// (clientAddress). Empty: the TCP peer is the client.
	TrustedProxies []netip.Prefix
	// Now is the clock (tests freeze it); nil is time.Now.
	Now func() time.Time
}

// DefaultSignInLimit: 10 failures at once, then 6 a minute, per client
// address; a person who mistypes a token is not held up, a script guessing
// is slowed to one check at a time. 4,096 addresses are remembered: about
// 500 bytes each with the cache's own, 2 MB in all (measured with
// runtime.MemStats over 100,000 addresses; TestSignInLimiterMemoryIsBounded
// checks the count).
var DefaultSignInLimit = SignInLimit{Every: 10 * time.Second, Burst: 10, Clients: 4096, LaneWait: 30 * time.Second}

// signInLimiter keeps one token bucket (x/time/rate) per client address in
// an LRU cache of fixed size (hashicorp/golang-lru).
type signInLimiter struct {
	cfg     SignInLimit
	mu      sync.Mutex // guards the cache and every client's inFlight
	clients *lru.Cache[netip.Prefix, *signInClient]
}

// signInClient is one address's budget: the bucket that failed attempts
// spend, the attempts being answered now, and the lane its attempts take
// once the budget is spent. An attempt is let in without the lane only if the
// bucket could pay for it and every other such attempt in flight, so a flood
// of concurrent guesses cannot overshoot the budget while a success costs
// nothing. (rate.Reservation.Cancel cannot give back a token once its time
// has passed, so "take, then refund a success" does not work.)
type signInClient struct {
	bucket   *rate.Limiter
	inFlight int
	// lane holds one token while an over-budget attempt is being answered;
	// a channel so that a wait can end with the request, and because blocked
	// senders are served first come, first served.
	lane chan struct{}
}

func newSignInLimiter(cfg SignInLimit) *signInLimiter {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	clients, err := lru.New[netip.Prefix, *signInClient](cfg.Clients)
	if err != nil {
		panic("handlers: SignInLimit.Clients must be positive")
	}
	return &signInLimiter{cfg: cfg, clients: clients}
}

// take lets one attempt of client in. Within the budget, lane is nil; over
// it, lane is the client's, which the caller must hold while the attempt is
// answered. The returned done must be called when the attempt is answered,
// with whether it failed: a failure within the budget spends a token; over
// the budget there is none left to spend, and a debt would only keep the
// address in its lane long after a flood stops.
func (l *signInLimiter) take(client netip.Prefix) (done func(failed bool), lane chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cl, found := l.clients.Get(client)
	if !found {
		cl = &signInClient{bucket: rate.NewLimiter(rate.Every(l.cfg.Every), l.cfg.Burst), lane: make(chan struct{}, 1)}
		l.clients.Add(client, cl)
	}
	if float64(cl.inFlight+1) > cl.bucket.TokensAt(l.cfg.Now()) {
		return func(bool) {}, cl.lane
	}
	cl.inFlight++
	return func(failed bool) {
		l.mu.Lock()
		defer l.mu.Unlock()
		cl.inFlight--
		if failed {
			cl.bucket.ReserveN(l.cfg.Now(), 1) // never waited on: it only records the spend
		}
	}, nil
}

// clientOf is who a request comes from for the limit: its address
// (clientAddress: the TCP peer, or X-Forwarded-For behind a trusted proxy),
// never X-Real-IP or a forwarded address from anyone else, which any client
// can write. An IPv6 client is its /64, the block one subscriber usually
// holds.
func clientOf(r *http.Request, trusted []netip.Prefix) netip.Prefix {
	addr := clientAddress(r, trusted)
	if !addr.IsValid() {
		return netip.Prefix{} // one shared bucket for whatever this is
	}
	bits := 32
	if addr.Is6() {
		bits = 64
	}
	p, _ := addr.Prefix(bits)
	return p
}

// isSignInAttempt tells the requests that may try a credential: every
// request to /login but the bare page (GET or HEAD without a token). Counting
// by exclusion keeps a method the route table might map onto a handler later
// (HEAD, say) from becoming an unlimited way in.
func isSignInAttempt(c echo.Context) bool {
	if c.Path() == urls.OIDCCallback {
		return true // each one may cost a code exchange and a SelfSubjectReview
	}
	if c.Path() != urls.Login {
		return false
	}
	r := c.Request()
	page := r.Method == http.MethodGet || r.Method == http.MethodHead
	return !page || r.URL.Query().Has("token")
}

// signInFailedKey marks a request whose presented credential was wrong.
const signInFailedKey = "sign-in-failed"

// failedSignIn records that the credential c's request presented was wrong:
// the one thing that spends the sign-in budget. Handlers call it where they
// learn so, nowhere else: a status code cannot tell a wrong token from a
// refused form or a callback nobody started.
func failedSignIn(c echo.Context) { c.Set(signInFailedKey, true) }

// LimitSignIns lets each sign-in attempt in within its address's budget, and
// one at a time over it (signInClient.lane). An attempt that waits more than
// LaneWait is answered 429, with Retry-After and a page saying when to try
// again, before its body is read or the API server is asked anything. It runs
// after routing (c.Path()).
func (h *Handlers) LimitSignIns() echo.MiddlewareFunc {
	l := newSignInLimiter(h.d.Limit.withDefaults())
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !isSignInAttempt(c) {
				return next(c)
			}
			done, lane := l.take(clientOf(c.Request(), l.cfg.TrustedProxies))
			if lane != nil {
				if !enterLane(c.Request().Context(), lane, l.cfg.LaneWait) {
					return h.tooManySignIns(c, l.cfg.LaneWait)
				}
				defer func() { <-lane }()
			}
			err := next(c)
			failed, _ := c.Get(signInFailedKey).(bool)
			done(failed)
			return err
		}
	}
}

// enterLane waits for lane until the request ends or wait passes.
func enterLane(ctx context.Context, lane chan struct{}, wait time.Duration) bool {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case lane <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	case <-timer.C:
		return false
	}
}

// tooManySignIns answers an attempt that waited too long behind its
// address's others.
func (h *Handlers) tooManySignIns(c echo.Context, wait time.Duration) error {
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	return page.Render(c, http.StatusTooManyRequests, pages.Login(model.LoginPage{
		Title: "Too many sign-in attempts",
		Message: "Too many sign-in attempts from your address failed, and so many are waiting now that clusterdesk did not get to yours. " +
			"Wait " + strconv.Itoa(secs) + " seconds, then reload this page and sign in again.",
		// The mode's instructions; token mode's form goes without a
		// CSRF token (the csrf middleware has not run: it reads the
		// body), so a retry relies on the browser's Sec-Fetch-Site.
		Mode: string(h.d.Gate.Mode),
	}))
}

// withDefaults is l, or DefaultSignInLimit where it is not set.
func (l SignInLimit) withDefaults() SignInLimit {
	if l.Every <= 0 || l.Burst <= 0 {
		l.Every, l.Burst = DefaultSignInLimit.Every, DefaultSignInLimit.Burst
	}
	if l.Clients <= 0 {
		l.Clients = DefaultSignInLimit.Clients
	}
	if l.LaneWait <= 0 {
		l.LaneWait = DefaultSignInLimit.LaneWait
	}
	return l
}

// wrongOIDCCredential tells the failed OIDC callbacks that spend the sign-in
// budget: a code the provider would not exchange, or an ID token that does
// not verify or is not this sign-in's, for a sign-in this browser started
// (auth.OIDC.finish checks the flight first). A callback with no sign-in
// under way or another's state is refused before anything is asked, and a
// provider's error or an unreachable provider is no credential at all.
func wrongOIDCCredential(err error) bool {
	var oe *auth.OIDCError
	if !errors.As(err, &oe) {
		return false
	}
	switch oe.Kind {
	case auth.OIDCExchangeFailed, auth.OIDCTokenInvalid, auth.OIDCNonceMismatch:
		return true
	}
	return false
}
