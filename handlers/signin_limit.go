package handlers

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// loginBody bounds the sign-in form's body: a bearer token (maxTokenLen,
// 16 KiB) and a CSRF token, percent-encoded. It is read before anyone is known.
const loginBody = "64KiB"

// SignInLimit is how many failed sign-in attempts one client may make: Burst
// at once, then one per Every (a successful one costs nothing). A sign-in attempt is a POST /login (token mode:
// each one costs a SelfSubjectReview on the API server) or a GET /login with a
// token (local mode's one-time URL).
type SignInLimit struct {
	Every time.Duration
	Burst int
	// Clients is how many clients are remembered. When more try, the one
	// heard from longest ago is forgotten, so spraying addresses cannot grow
	// memory; a forgotten client starts again with a full burst, so a client
	// whose bucket has refilled loses nothing by being forgotten.
	Clients int
	// Now is the clock (tests freeze it); nil is time.Now.
	Now func() time.Time
}

// DefaultSignInLimit: 10 attempts at once, then 6 a minute, per client; a
// person who mistypes a token is not held up, a script guessing is.
var DefaultSignInLimit = SignInLimit{Every: 10 * time.Second, Burst: 10, Clients: 4096}

// signInLimiter keeps one token bucket (x/time/rate) per client in an LRU
// cache of fixed size (hashicorp/golang-lru).
type signInLimiter struct {
	cfg     SignInLimit
	mu      sync.Mutex // guards the cache and every client's inFlight
	clients *lru.Cache[netip.Prefix, *signInClient]
}

// signInClient is one client's budget: the bucket that failed attempts
// spend, and the attempts being answered now. An attempt is let in only if
// the bucket could pay for it and every other attempt in flight, so a flood
// of concurrent guesses cannot overshoot the budget while a success costs
// nothing. (rate.Reservation.Cancel cannot give back a token once its time
// has passed, so "take, then refund a success" does not work.)
type signInClient struct {
	bucket   *rate.Limiter
	inFlight int
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

// take lets one attempt of client in, or says how long until one would be.
// The returned done must be called when the attempt is answered, with
// whether it failed: a failure spends a token (the bucket may go into debt,
// which later attempts wait out), a success spends nothing.
func (l *signInLimiter) take(client netip.Prefix) (done func(failed bool), ok bool, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cl, found := l.clients.Get(client)
	if !found {
		cl = &signInClient{bucket: rate.NewLimiter(rate.Every(l.cfg.Every), l.cfg.Burst)}
		l.clients.Add(client, cl)
	}
	now := l.cfg.Now()
	if missing := float64(cl.inFlight+1) - cl.bucket.TokensAt(now); missing > 0 {
		return nil, false, time.Duration(missing * float64(l.cfg.Every))
	}
	cl.inFlight++
	return func(failed bool) {
		l.mu.Lock()
		defer l.mu.Unlock()
		cl.inFlight--
		if failed {
			cl.bucket.ReserveN(l.cfg.Now(), 1) // never waited on: it only records the spend
		}
	}, true, 0
}

// clientOf is who a request comes from for the limit: the connection's
// address, never X-Forwarded-For or X-Real-IP, which any client can write
// (echo's RealIP trusts them). An IPv6 client is its /64, the block one
// subscriber usually holds. Behind a load balancer every client shares the
// balancer's address, and so one budget.
func clientOf(r *http.Request) netip.Prefix {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{} // one shared bucket for whatever this is
	}
	addr = addr.Unmap()
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

// limitSignIns answers 429, with Retry-After and a page saying when to try
// again, to a client over its sign-in budget, before its body is read or the
// API server is asked anything. It runs after routing (c.Path()).
func (h *Handlers) limitSignIns(l *signInLimiter) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !isSignInAttempt(c) {
				return next(c)
			}
			done, ok, wait := l.take(clientOf(c.Request()))
			if ok {
				err := next(c)
				done(!signedIn(c, err))
				return err
			}
			secs := int(math.Ceil(wait.Seconds()))
			if secs < 1 {
				secs = 1
			}
			c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
			return render(c, http.StatusTooManyRequests, pages.Login(model.LoginPage{
				Title: "Too many sign-in attempts",
				Message: "clusterdesk refuses sign-in attempts from your address for " + strconv.Itoa(secs) +
					" seconds: there were too many in a short time. Wait, then reload this page and sign in again.",
				// The mode's instructions; token mode's form goes without a
				// CSRF token (the csrf middleware has not run: it reads the
				// body), so a retry relies on the browser's Sec-Fetch-Site.
				Mode: string(h.gate.Mode),
			}))
		}
	}
}

// signedIn reports whether a sign-in attempt succeeded: both sign-ins answer
// a redirect into the console, every failure (refused token, used login URL,
// CSRF, body too large) a 4xx. Only failures spend the budget, so a person
// (or a test suite) that signs in many browsers from one address is never
// held up.
func signedIn(c echo.Context, err error) bool {
	if done, _ := c.Get(signedInKey).(bool); done && err == nil {
		return true // the OIDC callback answers 200 (login_oidc.go)
	}
	return err == nil && c.Response().Committed && c.Response().Status == http.StatusSeeOther
}

// signInLimit is d.SignInLimit, or DefaultSignInLimit when it is not set.
func (d Deps) signInLimit() SignInLimit {
	l := d.SignInLimit
	if l.Every <= 0 || l.Burst <= 0 {
		l.Every, l.Burst = DefaultSignInLimit.Every, DefaultSignInLimit.Burst
	}
	if l.Clients <= 0 {
		l.Clients = DefaultSignInLimit.Clients
	}
	return l
}
