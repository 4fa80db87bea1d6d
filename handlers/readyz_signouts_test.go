package handlers

import (
	"context"
	"io"
	"log/slog"
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

// noStore is a revocation store that is never reached in these tests (a
// fake for this one function, as DEVELOPERS.md allows; the integration test
// signout_failclosed_integration_test.go runs the real watch).
type noStore struct{}

func (noStore) Put(context.Context, kube.Revocation) error     { return nil }
func (noStore) Delete(context.Context, string) error           { return nil }
func (noStore) Restore(context.Context, kube.Revocation) error { return nil }
func (noStore) Beat(context.Context, string) error             { return nil }

// A replica whose sign-outs are behind the cluster by more than MaxLag is
// not ready, and /readyz says it is the sign-outs; once current, it is.
func TestReadyzFailsWhileTheSignOutsAreBehind(t *testing.T) {
	sessions := auth.NewSessionsWithKeys(auth.RandomKeys())
	shared := auth.NewSharedRevoker(noStore{}, sessions.Absolute)
	shared.SetReady(func() bool { return true })
	sessions.Revocations = shared
	e := New(Deps{
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Cluster: readyCluster{}, Access: denyAll{},
		Sessions: sessions, Gate: &auth.Gate{Mode: auth.ModeToken, Sessions: sessions}, User: "tester",
	})
	get := func() (int, string) {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get(); code != http.StatusServiceUnavailable || !strings.Contains(body, "sign-outs: not known yet") {
		t.Fatalf("before the first list: %d %q", code, body)
	}
	shared.Synced(time.Now().Add(-shared.MaxLag - time.Minute)) // last current a minute past the bound
	if code, body := get(); code != http.StatusServiceUnavailable || !strings.Contains(body, "sign-outs: behind") {
		t.Fatalf("behind: %d %q", code, body)
	}
	shared.Synced(time.Now())
	if code, body := get(); code != http.StatusOK || !strings.Contains(body, "sign-outs: current") {
		t.Fatalf("current: %d %q", code, body)
	}
}
