//go:build integration

package handlers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// capConsole is the console with live updates in one sign-in mode on the
// devcluster, served over real HTTP (streams need a connection of their own).
type capConsole struct {
	srv     *httptest.Server
	e       http.Handler
	streams *live.Streams
}

// liveDeps returns a function adding live updates over cache to Deps, with
// streams limited by opts; the streams close with the test.
func liveDeps(t *testing.T, cache Cluster, opts live.Options) (*live.Streams, func(*Deps)) {
	t.Helper()
	opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	streams := live.NewStreams(opts)
	t.Cleanup(streams.Close)
	lv := NewLiveUpdates(cache, streams)
	return streams, func(d *Deps) { d.Live = lv }
}

// newCapConsole starts the console in token or proxy mode (admin's cache,
// impersonating or acting with the pasted token) with streams limited by opts.
func newCapConsole(t *testing.T, mode auth.Mode, opts live.Options) *capConsole {
	t.Helper()
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cache := syncedCache(t, cfg, log)
	users := strictUsers(t, cfg)
	sessions := auth.NewSessions()
	gate := &auth.Gate{Mode: mode, Sessions: sessions}
	deps := Deps{Log: log, Cluster: cache, Sessions: sessions, Gate: gate, User: "console",
		Access: kube.UserAccess{Users: users}, Users: users}
	switch mode {
	case auth.ModeToken:
		deps.TokenReview = reviewAs(cfg)
	case auth.ModeProxy:
		gate.Sessions = nil
		gate.Proxy = &auth.Proxy{UserHeader: "X-Forwarded-User", GroupsHeader: "X-Forwarded-Groups",
			SecretHeader: auth.DefaultProxySecretHeader, Secret: []byte(itProxySecret)}
	}
	if err := gate.Check(); err != nil {
		t.Fatal(err)
	}
	streams, withLive := liveDeps(t, cache, opts)
	cc := &capConsole{e: newConsole(t, deps, withLive).e, streams: streams}
	cc.srv = httptest.NewUnstartedServer(cc.e)
	// As cmd/clusterdesk: Shutdown waits for handlers, and a stream's
	// handler returns only when Streams ends it.
	cc.srv.Config.RegisterOnShutdown(streams.Close)
	cc.srv.Start()
	t.Cleanup(cc.srv.Close)
	return cc
}

// viaProxy signs a request as the authenticating proxy does for user.
func viaProxy(user string) func(*http.Request) {
	return func(r *http.Request) {
		r.Header.Set(auth.DefaultProxySecretHeader, itProxySecret)
		r.Header.Set("X-Forwarded-User", user)
		r.Header.Set("X-Forwarded-Groups", "it-stream-readers") // a system: group would be refused (proxy_names.go)
	}
}

// tab is one open /events stream.
type tab struct {
	first  sseclient.Event
	resp   *http.Response
	cancel context.CancelFunc
	ended  chan struct{} // closed when the server ends the stream
}

func (tb *tab) close() { tb.cancel(); tb.resp.Body.Close() }

// openTab opens /events on url as a page of the console would and reads its
// first event: hello, or the refusal that replaces the stream.
func openTab(t *testing.T, url string, sign func(*http.Request)) *tab {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/events?kinds=csrs", nil)
	req.Header.Set("Accept", "text/event-stream")
	sign(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	tb := &tab{resp: resp, cancel: cancel, ended: make(chan struct{})}
	t.Cleanup(tb.close)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/events: status %d", resp.StatusCode)
	}
	r := sseclient.NewReader(resp.Body)
	first := make(chan error, 1)
	go func() {
		defer close(tb.ended)
		var err error
		tb.first, err = r.Next()
		first <- err
		for err == nil {
			_, err = r.Next()
		}
	}()
	select {
	case err := <-first:
		if err != nil {
			t.Fatalf("/events: no first event: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("/events: no first event within 30 s")
	}
	return tb
}

// openTabs opens n tabs and fails unless each says hello.
func openTabs(t *testing.T, url string, sign func(*http.Request), n int, who string) []*tab {
	t.Helper()
	var tabs []*tab
	for i := range n {
		tb := openTab(t, url, sign)
		if tb.first.Event != live.HelloEvent {
			t.Fatalf("%s, tab %d: first event %q, want hello", who, i+1, tb.first.Event)
		}
		tabs = append(tabs, tb)
	}
	return tabs
}

// refused fails unless the tab was refused with the too-many-streams banner
// saying want, and its stream ended.
func refused(t *testing.T, tb *tab, who, want string) {
	t.Helper()
	if tb.first.Event != tooManyStreamsEvent {
		t.Fatalf("%s: first event %q, want %s", who, tb.first.Event, tooManyStreamsEvent)
	}
	banner := doc(t, []byte(tb.first.Data)).Find(`#live-status [data-testid="banner-too-many-streams"]`)
	if banner.Length() != 1 || !strings.Contains(banner.Text(), want) {
		t.Errorf("%s: the refusal's banner %q does not say %q", who, banner.Text(), want)
	}
	select {
	case <-tb.ended:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: the refused stream stays open", who)
	}
}

// overTheUserLimit opens 30 tabs of one identity, each through sign(i):
// the first live.DefaultMaxPerUser say hello, the rest are refused.
func overTheUserLimit(t *testing.T, url string, sign func(i int) func(*http.Request), who string) []*tab {
	t.Helper()
	var tabs []*tab
	for i := range 30 {
		tb := openTab(t, url, sign(i))
		if i < live.DefaultMaxPerUser {
			if tb.first.Event != live.HelloEvent {
				t.Fatalf("%s, tab %d within the limit: first event %q", who, i+1, tb.first.Event)
			}
			tabs = append(tabs, tb)
			continue
		}
		refused(t, tb, fmt.Sprintf("%s, tab %d", who, i+1), "signed in as you")
	}
	return tabs
}

// Proxy mode: every request is its own session, so a limit per session
// limited nothing (30 of 30 said hello). 30 streams of one user through the
// proxy: 12 get hello, 18 are refused; another user is not affected; a
// closed tab's place comes back.
func TestProxyStreamsAreLimitedPerUser(t *testing.T) {
	cc := newCapConsole(t, auth.ModeProxy, live.Options{})
	alice := overTheUserLimit(t, cc.srv.URL, func(int) func(*http.Request) { return viaProxy("alice") }, "alice")
	openTabs(t, cc.srv.URL, viaProxy("bob"), 1, "bob")

	alice[0].close()
	waitFor(t, "the closed tab's stream to end on the server", 30*time.Second, func() bool {
		return cc.streams.Stats().Connections == live.DefaultMaxPerUser
	})
	openTabs(t, cc.srv.URL, viaProxy("alice"), 1, "alice after closing a tab")
	refused(t, openTab(t, cc.srv.URL, viaProxy("alice")), "alice over the limit again", "Close the tabs")
}

// Token mode: each sign-in was limited alone, so K sign-ins of one token
// gave 12×K streams. Three sign-ins of one token, 10 tabs each: 12 get
// hello, the rest are refused, whichever sign-in they come from; signing
// one session out gives its tabs' places back.
func TestTokenStreamsAreLimitedPerUserAcrossSignIns(t *testing.T) {
	cc := newCapConsole(t, auth.ModeToken, live.Options{})
	token := staticUser(t, testcluster.Auditor).token
	var sessions []*http.Cookie
	for range 3 {
		sessions = append(sessions, sessionCookie(t, cc.do(tokenSignInRequest(t, cc.e, token))))
	}
	signs := func(i int) func(*http.Request) { return withCookie(sessions[i/10]) }
	tabs := overTheUserLimit(t, cc.srv.URL, signs, "auditor")

	// The first sign-in holds 10 of the 12: logging it out ends them.
	r := httptest.NewRequest(http.MethodPost, "/logout", nil)
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.Header.Set("X-CSRF-Token", pageCSRFToken(t, cc.e, withCookie(sessions[0])))
	r.AddCookie(sessions[0])
	if rec := cc.do(r); rec.Code != http.StatusOK {
		t.Fatalf("logout: %d", rec.Code)
	}
	for i, tb := range tabs[:10] {
		select {
		case <-tb.ended:
		case <-time.After(30 * time.Second):
			t.Fatalf("tab %d of the signed-out session is still open", i+1)
		}
	}
	waitFor(t, "the signed-out session's streams to end on the server", 30*time.Second, func() bool {
		return cc.streams.Stats().Connections == 2
	})
	openTabs(t, cc.srv.URL, withCookie(sessions[2]), 10, "auditor's third sign-in after the first signed out")
	refused(t, openTab(t, cc.srv.URL, withCookie(sessions[1])), "auditor over the limit again", "Close the tabs")
}

func (cc *capConsole) do(r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	cc.e.ServeHTTP(rec, r)
	return rec
}

// OIDC mode: three sign-ins of alice at the provider, 10 tabs each: 12 get
// hello, the rest are refused.
func TestOIDCStreamsAreLimitedPerUserAcrossSignIns(t *testing.T) {
	var streams *live.Streams
	oc := newOIDCReplica(t, testcluster.OIDCClientConsole, "", auth.NewSessions(), func(d *Deps) {
		var withLive func(*Deps)
		streams, withLive = liveDeps(t, d.Cluster, live.Options{})
		withLive(d)
	})
	srv := httptest.NewServer(oc.e)
	t.Cleanup(srv.Close)
	var browsers []*oidcBrowser
	for range 3 {
		b := oc.browser(t)
		b.signIn(t, "alice")
		browsers = append(browsers, b)
	}
	overTheUserLimit(t, srv.URL, func(i int) func(*http.Request) { return browsers[i/10].allCookies }, "alice")
	if st := streams.Stats(); st.Connections != live.DefaultMaxPerUser || st.Users != 1 {
		t.Errorf("streams served: %+v, want %d of one user", st, live.DefaultMaxPerUser)
	}
}

// A replica serves --max-streams streams in all: with 3, the fourth, of a
// user who has none, is told the replica is full; a closed stream's place
// comes back; shutting the server down ends every stream and frees every
// place (Shutdown returns, which it does only once every handler has).
func TestStreamsArePerReplicaLimited(t *testing.T) {
	cc := newCapConsole(t, auth.ModeProxy, live.Options{MaxStreams: 3})
	tabs := openTabs(t, cc.srv.URL, viaProxy("alice"), 2, "alice")
	tabs = append(tabs, openTabs(t, cc.srv.URL, viaProxy("bob"), 1, "bob")...)
	refused(t, openTab(t, cc.srv.URL, viaProxy("carol")), "carol on a full replica", "as many live connections as it may")

	tabs[2].close()
	waitFor(t, "bob's closed stream to end on the server", 30*time.Second, func() bool {
		return cc.streams.Stats().Connections == 2
	})
	tabs = append(tabs, openTabs(t, cc.srv.URL, viaProxy("carol"), 1, "carol after bob left")...)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cc.srv.Config.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with open streams: %v", err)
	}
	for i, tb := range []*tab{tabs[0], tabs[1], tabs[3]} {
		select {
		case <-tb.ended:
		case <-time.After(30 * time.Second):
			t.Fatalf("stream %d outlived the server's shutdown", i+1)
		}
	}
	if st := cc.streams.Stats(); st.Connections != 0 || st.Users != 0 {
		t.Errorf("after shutdown: %+v, want no connection held", st)
	}
}
