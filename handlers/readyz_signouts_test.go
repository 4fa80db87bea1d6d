package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

type readyCluster struct{ emptyCluster }

func (readyCluster) Ready() bool { return true }

// echoStore stands in for the cluster in this test of one handler (the
// integration test signout_failclosed_integration_test.go runs the real
// watch): it keeps nothing and delivers each heartbeat back at once.
type echoStore struct{ to *auth.SharedRevoker }

func (echoStore) Put(context.Context, kube.Revocation) error     { return nil }
func (echoStore) Delete(context.Context, string) error           { return nil }
func (echoStore) Restore(context.Context, kube.Revocation) error { return nil }
func (s *echoStore) Beat(_ context.Context, marker string) error {
	s.to.Heard(marker)
	return nil
}

// A replica whose sign-outs are behind the cluster by more than MaxLag is
// not ready, and /readyz says it is the sign-outs; once current, it is.
func TestReadyzFailsWhileTheSignOutsAreBehind(t *testing.T) {
	sessions := auth.NewSessionsWithKeys(auth.RandomKeys())
	store := &echoStore{}
	shared := auth.NewSharedRevoker(store, sessions.Absolute)
	store.to = shared
	shared.SetReady(func() bool { return true })
	sessions.Revocations = shared
	e := newConsole(t, Deps{Cluster: readyCluster{}, Access: denyAll{}, Sessions: sessions, User: "tester"}, tokenMode(nil)).e
	get := func() (int, string) {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get(); code != http.StatusServiceUnavailable || !strings.Contains(body, "sign-outs: not known yet") {
		t.Fatalf("before the first list: %d %q", code, body)
	}
	shared.Beat(context.Background())
	if code, body := get(); code != http.StatusOK || !strings.Contains(body, "sign-outs: current") {
		t.Fatalf("current: %d %q", code, body)
	}
	shared.MaxLag = -time.Nanosecond // any heartbeat is too old now: behind
	if code, body := get(); code != http.StatusServiceUnavailable || !strings.Contains(body, "sign-outs: behind") {
		t.Fatalf("behind: %d %q", code, body)
	}
}
