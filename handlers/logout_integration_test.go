//go:build integration

package handlers

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// logoutServer is the console in one mode on the devcluster with live updates
// and per-user clients, served over a real socket (event streams).
type logoutServer struct {
	h     http.Handler
	srv   *httptest.Server
	users *kube.Users
}

func newLogoutServer(t *testing.T, mode auth.Mode) (*logoutServer, *http.Cookie) {
	t.Helper()
	stack := newLiveStack(t)
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	users := usersOf(t, cfg, mode != auth.ModeLocal)
	sessions := auth.NewSessions()
	gate := &auth.Gate{Mode: mode, Sessions: sessions, LocalUser: testcluster.Admin}
	var loginToken string
	deps := Deps{Log: stack.log, Cluster: stack.cache, Sessions: sessions, Gate: gate, User: testcluster.Admin, Live: stack.updates}
	wireUsers(&deps, users)
	switch mode {
	case auth.ModeLocal:
		deps.Logins = auth.NewLoginTokens(func(tok string) { loginToken = tok })
	case auth.ModeToken:
		deps.TokenReview = reviewAs(cfg)
	}
	ls := &logoutServer{h: newConsole(t, deps, perUserClients(users)).e, users: users}
	ls.srv = httptest.NewServer(ls.h)
	t.Cleanup(ls.srv.Close)

	var rec *httptest.ResponseRecorder
	switch mode {
	case auth.ModeLocal:
		rec = httptest.NewRecorder()
		ls.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/login?token="+loginToken, nil))
	case auth.ModeToken:
		rec = httptest.NewRecorder()
		ls.h.ServeHTTP(rec, tokenSignInRequest(t, ls.h, staticUser(t, testcluster.Admin).token))
	}
	return ls, sessionCookie(t, rec)
}

// get asks the console for path with the saved cookie, as an EventSource
// would when stream is set.
func (ls *logoutServer) get(t *testing.T, cookie *http.Cookie, path string, stream bool) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, ls.srv.URL+path, nil)
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	req.AddCookie(cookie)
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The attack of issue 14 point 4: a copy of the session cookie taken before
// "Log out" must not work after it, in local mode (sessions only in the
// cookie) and token mode (the user's client cached, streams open). Tabs of
// the session with an open event stream are told session-expired within
// seconds and their stream ends.
func TestLogoutEndsTheSessionEverywhere(t *testing.T) {
	for _, mode := range []auth.Mode{auth.ModeLocal, auth.ModeToken} {
		t.Run(string(mode), func(t *testing.T) {
			ls, saved := newLogoutServer(t, mode)
			if code := ls.get(t, saved, "/csrs", false); code != http.StatusOK {
				t.Fatalf("signed in: /csrs status %d", code)
			}
			events := subscribe(t, ls.srv, saved, "kinds=csrs")
			await(t, events, 10*time.Second, "hello", func(ev sseclient.Event) bool { return ev.Event == "hello" })
			if mode == auth.ModeToken && clientsKept(ls.users) == 0 {
				t.Fatal("token mode kept no per-user client while signed in: the check below would prove nothing")
			}

			token := pageCSRFToken(t, ls.h, withCookie(saved))
			out := httptest.NewRequest(http.MethodPost, "/logout", strings.NewReader("_csrf="+token))
			out.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			out.Header.Set("Sec-Fetch-Site", "same-origin")
			out.AddCookie(saved)
			rec := httptest.NewRecorder()
			ls.h.ServeHTTP(rec, out)
			if rec.Code != http.StatusOK {
				t.Fatalf("logout: status %d", rec.Code)
			}
			loggedOut := time.Now()

			if code := ls.get(t, saved, "/csrs", false); code != http.StatusUnauthorized {
				t.Errorf("saved cookie after logout: page status %d, want 401", code)
			}
			if code := ls.get(t, saved, "/events?kinds=csrs", true); code != http.StatusUnauthorized {
				t.Errorf("saved cookie after logout: /events (EventSource) status %d, want 401", code)
			}
			if code := ls.get(t, saved, "/events?kinds=csrs", false); code != http.StatusUnauthorized {
				t.Errorf("saved cookie after logout: /events status %d, want 401", code)
			}

			ev := await(t, events, 5*time.Second, "session-expired", func(ev sseclient.Event) bool { return ev.Event == sessionEndedEvent })
			if !strings.Contains(ev.Data, "banner-session-expired") {
				t.Errorf("session-expired carries no banner: %.200s", ev.Data)
			}
			closed := time.After(5 * time.Second)
		drain:
			for {
				select {
				case _, ok := <-events:
					if !ok {
						break drain
					}
				case <-closed:
					t.Fatal("the stream stayed open 5 s after session-expired")
				}
			}
			t.Logf("stream told and closed %v after logout", time.Since(loggedOut).Round(time.Millisecond))
			if n := clientsKept(ls.users); n != 0 {
				t.Errorf("%d per-user clients kept after logout, want 0", n)
			}
		})
	}
}
