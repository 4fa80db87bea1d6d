package handlers

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testwait"
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

// TestOverBudgetAttemptsGoOneAtATime: past its budget of failures, a
// client's attempts are checked one at a time, whatever X-Forwarded-For an
// untrusted peer claims: while one is being checked, the next waits and (with
// a LaneWait shorter than the check) is answered 429 with Retry-After and a
// page. Another client signs in meanwhile, and the limited client's valid
// token is accepted once its turn comes.
func TestOverBudgetAttemptsGoOneAtATime(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	limit := frozenLimit(2)
	limit.LaneWait = time.Millisecond
	e := heldReviewConsole(t, limit, entered, release)
	attempt := func(token, remote, xff string) *httptest.ResponseRecorder {
		r := tokenLoginRequest(t, e, token, remote)
		r.Header.Set("X-Forwarded-For", xff) // from an untrusted peer: ignored
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, r)
		return rec
	}
	for i := range 2 {
		if rec := attempt("bad-token", "203.0.113.9:40000", "198.51.100."+strconv.Itoa(i)); rec.Code != http.StatusUnauthorized {
			t.Fatalf("bad token %d: %d, want 401", i+1, rec.Code)
		}
	}
	held := make(chan int)
	go func() { held <- attempt("held-bad-token", "203.0.113.9:40001", "198.51.100.50").Code }()
	testwait.Recv(t, entered, testwait.Within, "the over-budget attempt at the token review") // it holds the client's lane until released
	rec := attempt("bad-token", "203.0.113.9:40002", "198.51.100.99")
	if rec.Code != http.StatusTooManyRequests {
		t.Errorf("a second over-budget attempt while one is checked: %d, want 429", rec.Code)
	}
	if ra, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || ra < 1 || !strings.Contains(rec.Body.String(), "Too many sign-in attempts") {
		t.Errorf("429 with Retry-After %q and page:\n%s", rec.Header().Get("Retry-After"), rec.Body.String())
	}
	if c := attempt(goodToken, "192.0.2.77:5555", "").Code; c != http.StatusSeeOther {
		t.Errorf("another client's sign-in meanwhile: %d, want 303", c)
	}
	close(release)
	if c := testwait.Recv(t, held, testwait.Within, "the held attempt's answer"); c != http.StatusUnauthorized {
		t.Errorf("the held bad token: %d, want 401", c)
	}
	if c := attempt(goodToken, "203.0.113.9:40003", "").Code; c != http.StatusSeeOther {
		t.Errorf("the limited client's valid token: %d, want 303", c)
	}
}

// heldReviewConsole is a token-mode console limited by limit whose review of
// "held-bad-token" says so on entered and waits for release.
func heldReviewConsole(t *testing.T, limit SignInLimit, entered chan<- struct{}, release <-chan struct{}) http.Handler {
	t.Helper()
	return newConsole(t, Deps{Cluster: emptyCluster{}, Access: denyAll{}, User: "console", SignInLimit: limit},
		tokenMode(func(ctx context.Context, token string) (kube.Identity, error) {
			if token == "held-bad-token" {
				entered <- struct{}{}
				heldUntil(release)
			}
			return reviewTokens(ctx, token)
		})).e
}

// TestLocalLoginURLOverBudget: guessing local mode's one-time token spends the
// budget, after which guesses go one at a time; the right token is still
// accepted (a page that makes the browser load guessed login URLs cannot
// lock its person out), and the login page itself is no attempt.
func TestLocalLoginURLOverBudget(t *testing.T) {
	ts := newConsole(t, Deps{Cluster: emptyCluster{}, Access: denyAll{}, User: "console", SignInLimit: frozenLimit(5)})
	e := ts.e
	get := func(target string) int {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.RemoteAddr = "[2001:db8:1:2:3::4]:4444"
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, r)
		return rec.Code
	}
	codes := map[int]int{}
	for i := range 100 {
		codes[get("/login?token=guess"+strconv.Itoa(i))]++
	}
	if codes[http.StatusUnauthorized] != 100 {
		t.Errorf("answers to 100 guesses %v, want 100×401", codes)
	}
	if c := get("/login?token=" + ts.token); c != http.StatusSeeOther {
		t.Errorf("the right token from a client over its budget: %d, want 303", c)
	}
	if c := get("/login"); c != http.StatusOK {
		t.Errorf("GET /login without a token: %d, want 200", c)
	}
}

// TestSignInBodyIsSmall: the public sign-in form is read before anyone is
// known, so its body gets loginBody (64 KiB), not maxBody, also when chunked.
func TestSignInBodyIsSmall(t *testing.T) {
	var reviews atomic.Int64
	e := newConsole(t, Deps{Cluster: emptyCluster{}, Access: denyAll{}, User: "console"},
		tokenMode(func(ctx context.Context, token string) (kube.Identity, error) {
			reviews.Add(1)
			return reviewTokens(ctx, token)
		})).e
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

// TestRefusalsBeforeACheckSpendNothing: sign-in posts refused before any
// token is checked (an empty token, no CSRF token) are no failed sign-ins:
// after 40 of them the client's budget of 2 still lets two attempts be
// checked beside each other. Had they spent it, the second would wait for
// the first (held in its review) and get 429.
func TestRefusalsBeforeACheckSpendNothing(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	limit := frozenLimit(2)
	limit.LaneWait = time.Millisecond
	e := heldReviewConsole(t, limit, entered, release)
	const remote = "203.0.113.9:40000"
	for range 20 {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, tokenLoginRequest(t, e, "", remote))
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("an empty token: %d, want 400", rec.Code)
		}
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader("token=bad"))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.RemoteAddr = remote
		rec = httptest.NewRecorder()
		e.ServeHTTP(rec, r)
		if rec.Code != http.StatusForbidden {
			t.Fatalf("a post without a CSRF token: %d, want 403", rec.Code)
		}
	}
	held := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, tokenLoginRequest(t, e, "held-bad-token", remote))
		held <- rec.Code
	}()
	testwait.Recv(t, entered, testwait.Within, "the held attempt at the token review")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, tokenLoginRequest(t, e, "bad-token", remote))
	close(release)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("a bad token beside a held one after 40 refusals: %d, want 401 (checked: the refusals spent nothing)", rec.Code)
	}
	if c := testwait.Recv(t, held, testwait.Within, "the held attempt's answer"); c != http.StatusUnauthorized {
		t.Errorf("the held bad token: %d, want 401", c)
	}
}
