package handlers

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// A cookie saved before "Log out" gets 401 afterwards, on pages and on the
// event stream (EventSource or not), in the modes that have sessions.
func TestLogoutRevokesASavedCookie(t *testing.T) {
	for _, mode := range []auth.Mode{auth.ModeLocal, auth.ModeToken} {
		t.Run(string(mode), func(t *testing.T) {
			ms := newModeServer(t, mode, false)
			saved := httptest.NewRequest(http.MethodGet, "/", nil)
			ms.sign(saved)
			cookie := saved.Cookies()[0]
			out := httptest.NewRequest(http.MethodPost, "/logout", nil)
			out.Header.Set("Sec-Fetch-Site", "same-origin")
			out.Header.Set("X-CSRF-Token", pageCSRFToken(t, ms.e, ms.sign))
			ms.sign(out)
			if rec := ms.do(out); rec.Code != http.StatusOK {
				t.Fatalf("logout: status %d", rec.Code)
			}
			for _, tc := range []struct{ path, accept string }{{"/", ""}, {"/csrs", ""}, {urls.Events, "text/event-stream"}, {urls.Events, ""}} {
				r := httptest.NewRequest(http.MethodGet, tc.path, nil)
				if tc.accept != "" {
					r.Header.Set("Accept", tc.accept)
				}
				r.AddCookie(cookie)
				if rec := ms.do(r); rec.Code != http.StatusUnauthorized {
					t.Errorf("saved cookie after logout, GET %s (Accept %q): status %d, want 401", tc.path, tc.accept, rec.Code)
				}
			}
			// The logout page's sign-in form (token mode) works: its token is bound to a pre-session.
			if mode == auth.ModeToken {
				ms.tokenLogin(t, goodToken, http.StatusSeeOther)
			}
		})
	}
}
