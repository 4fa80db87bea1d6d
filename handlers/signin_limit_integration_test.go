//go:build integration

package handlers

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/testwait"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// frozenBudget is the budget of failures the tests spend: the default's, on a
// clock that does not move, so no refill hides a spent budget however long a
// test takes.
func frozenBudget(trusted ...string) SignInLimit {
	l := frozenLimit(DefaultSignInLimit.Burst)
	for _, p := range trusted {
		l.TrustedProxies = append(l.TrustedProxies, netip.MustParsePrefix(p))
	}
	return l
}

// behindProxy makes r arrive as from the Ingress on loopback, forwarding for
// client.
func behindProxy(client string) func(*http.Request) {
	return func(r *http.Request) {
		r.RemoteAddr = "127.0.0.1:40000"
		r.Header.Set("X-Forwarded-For", client)
	}
}

// tokenConsole is the console in token mode on the devcluster; each sign-in
// is reviewed by the API server. hold, when it returns a channel for a
// token, keeps that token's review waiting until the channel is closed.
func tokenConsole(t *testing.T, limit SignInLimit, hold func(token string) <-chan struct{}) http.Handler {
	t.Helper()
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cache := syncedCache(t, cfg, log)
	users := strictUsers(t, cfg)
	review := reviewAs(cfg)
	return newConsole(t, Deps{Log: log, Cluster: cache, User: "console", Users: users, SignInLimit: limit},
		perUserClients(users), tokenMode(func(ctx context.Context, token string) (kube.Identity, error) {
			if hold != nil {
				if wait := hold(token); wait != nil {
					heldUntil(wait)
				}
			}
			return review(ctx, token)
		})).e
}

func tokenAttempt(t *testing.T, h http.Handler, token string, via func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	r := tokenSignInRequest(t, h, token)
	via(r)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// TestCallbackFloodBehindProxyDoesNotBlockOIDCSignIn: behind an Ingress
// (loopback, trusted), a client sends budget+1 provider callbacks without a
// sign-in under way (no flight cookie, made-up state and code), which
// anyone can send. They are refused without spending the budget, and a real
// sign-in at the devcluster's provider from the same client address, then
// from the Ingress's own, succeeds.
func TestCallbackFloodBehindProxyDoesNotBlockOIDCSignIn(t *testing.T) {
	oc := newOIDCConsoleLimited(t, testcluster.OIDCClientConsole, "", auth.NewSessions(), frozenBudget("127.0.0.1/32"))
	const client = "198.51.100.30"
	for i := range DefaultSignInLimit.Burst + 1 {
		r := httptest.NewRequest(http.MethodGet, urls.OIDCCallback+"?state=x&code=y", nil)
		behindProxy(client)(r)
		if rec := oc.do(r); rec.Code != http.StatusBadRequest {
			t.Errorf("callback %d without a sign-in under way: %d, want 400: %s", i+1, rec.Code, loginMessage(t, rec.Body.String()))
		}
	}
	bob := oc.browser(t)
	bob.via = behindProxy(client)
	bob.signIn(t, "bob")
	carol := oc.browser(t)
	carol.via = func(r *http.Request) { r.RemoteAddr = "127.0.0.1:40001" } // no X-Forwarded-For: the Ingress's own address
	carol.signIn(t, "carol")
}

// TestWrongTokensBehindProxyDoNotLockOutValidTokens: behind an Ingress, client
// A spends its budget and more on wrong tokens (each reviewed by the API
// server and refused). Client B, behind the same Ingress, signs in with a
// valid token; so does A itself: a credential that verifies is accepted
// whatever the address's failures.
func TestWrongTokensBehindProxyDoNotLockOutValidTokens(t *testing.T) {
	h := tokenConsole(t, frozenBudget("127.0.0.1/32"), nil)
	valid := staticUser(t, testcluster.Admin).token
	for i := range DefaultSignInLimit.Burst + 5 {
		if rec := tokenAttempt(t, h, "wrong-token-"+strconv.Itoa(i), behindProxy("198.51.100.10")); rec.Code != http.StatusUnauthorized {
			t.Errorf("wrong token %d from A: %d, want 401: %s", i+1, rec.Code, loginMessage(t, rec.Body.String()))
		}
	}
	if rec := tokenAttempt(t, h, valid, behindProxy("198.51.100.20")); rec.Code != http.StatusSeeOther {
		t.Errorf("client B's valid token: %d, want 303: %s", rec.Code, loginMessage(t, rec.Body.String()))
	}
	if rec := tokenAttempt(t, h, valid, behindProxy("198.51.100.10")); rec.Code != http.StatusSeeOther {
		t.Errorf("client A's valid token after its failures: %d, want 303: %s", rec.Code, loginMessage(t, rec.Body.String()))
	}
}

// TestForwardedForFromUntrustedPeerIsIgnored: a client that is not a trusted
// proxy cannot pick a fresh address (and budget) per attempt by writing
// X-Forwarded-For: its failures spend one budget, after which its attempts
// go one at a time. While one is held in its review, the next, naming yet
// another address, is refused 429 (LaneWait is a millisecond) instead of
// being let in beside it.
func TestForwardedForFromUntrustedPeerIsIgnored(t *testing.T) {
	limit := frozenBudget("10.0.0.0/8") // the peer, loopback, is not a proxy
	limit.LaneWait = time.Millisecond
	entered, release := make(chan struct{}, 1), make(chan struct{})
	h := tokenConsole(t, limit, func(token string) <-chan struct{} {
		if token != "held-wrong-token" {
			return nil
		}
		entered <- struct{}{}
		return release
	})
	spoof := func(i int) func(*http.Request) { return behindProxy("198.51.100." + strconv.Itoa(i)) }
	for i := range DefaultSignInLimit.Burst {
		if rec := tokenAttempt(t, h, "wrong-token-"+strconv.Itoa(i), spoof(i)); rec.Code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d, want 401", i+1, rec.Code)
		}
	}
	held := make(chan int, 1)
	go func() { held <- tokenAttempt(t, h, "held-wrong-token", spoof(100)).Code }()
	select {
	case <-entered:
	case code := <-held:
		t.Fatalf("the attempt after the budget was answered %d without being checked", code)
	case <-time.After(testwait.Within):
		t.Fatal("the attempt after the budget was neither checked nor answered")
	}
	rec := tokenAttempt(t, h, "wrong-token-next", spoof(101))
	close(release)
	if rec.Code != http.StatusTooManyRequests {
		t.Errorf("an attempt naming a new X-Forwarded-For while the client's lane is held: %d, want 429 (its own budget was used): %s",
			rec.Code, loginMessage(t, rec.Body.String()))
	}
	if code := testwait.Recv(t, held, testwait.Within, "the held wrong token's answer"); code != http.StatusUnauthorized {
		t.Errorf("the held wrong token: %d, want 401", code)
	}
}
