package ledger

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testwait"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// exportAs serves an export as user in the background; done is closed when
// the handler returned (rec is then complete).
func exportAs(e http.Handler, user string, running *sync.WaitGroup) (rec *httptest.ResponseRecorder, done chan struct{}) {
	rec, done = httptest.NewRecorder(), make(chan struct{})
	r := httptest.NewRequest(http.MethodGet, urls.LedgerNDJSON, nil)
	r = r.WithContext(kube.WithIdentity(r.Context(), kube.Identity{User: user}))
	running.Go(func() {
		defer close(done)
		e.ServeHTTP(rec, r)
	})
	return rec, done
}

// Exports running at once are bounded per user and in all: one more is
// refused with 429, Retry-After and why, while the running ones go on, and
// a place given back is taken again.
func TestExportsAtOnceAreBounded(t *testing.T) {
	s := filled(t, 3)
	s.exporting, s.release = make(chan struct{}), make(chan struct{})
	e := newServer(t, s, nil)
	var running sync.WaitGroup
	released := false
	release := func() {
		if !released {
			released = true
			close(s.release)
			running.Wait()
		}
	}
	defer release()

	refused := func(user, bound string) {
		t.Helper()
		rec, done := exportAs(e, user, &running)
		select {
		case <-s.exporting:
			t.Fatalf("%s's export past the %s bound runs", user, bound)
		case <-done:
		case <-time.After(testwait.Within):
			t.Fatalf("%s's export past the %s bound was neither refused nor run", user, bound)
		}
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" ||
			!strings.Contains(rec.Body.String(), bound) {
			t.Errorf("%s's export past the %s bound: %d, Retry-After %q, %.200q", user, bound, rec.Code,
				rec.Header().Get("Retry-After"), rec.Body.String())
		}
	}
	start := func(user string) *httptest.ResponseRecorder {
		rec, _ := exportAs(e, user, &running)
		testwait.Recv(t, s.exporting, testwait.Within, user+"'s export to start")
		return rec
	}
	var held []*httptest.ResponseRecorder
	for range DefaultExportLimits.PerUser {
		held = append(held, start("mallory"))
	}
	refused("mallory", "You have 2 ledger exports running already")
	for i := DefaultExportLimits.PerUser; i < DefaultExportLimits.Total; i++ {
		held = append(held, start("user-"+string(rune('a'+i))))
	}
	refused("alice", "running 8 ledger exports already")

	release()
	for i, rec := range held {
		if rec.Code != http.StatusOK || strings.Count(rec.Body.String(), "\n") != len(s.entries) {
			t.Errorf("held export %d: %d, %d lines", i, rec.Code, strings.Count(rec.Body.String(), "\n"))
		}
	}
	s.exporting = nil
	rec, _ := exportAs(e, "mallory", &running)
	running.Wait()
	if rec.Code != http.StatusOK {
		t.Errorf("mallory's export once hers ended: %d", rec.Code)
	}
}
