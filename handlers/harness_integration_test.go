//go:build integration

package handlers

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// The devcluster side of the test harness (harness_test.go): consoles on the
// real API server, as one identity (newLiveServer…) or as each signed-in
// person (perUserClients over strictUsers).

// liveServer is the console's handler wired to the real devcluster as one identity.
type liveServer struct {
	testServer
	cache *kube.Cache
}

// newLiveServer is a console acting as identity, reading from identity's
// shared cache (shared_cache_integration_test.go).
func newLiveServer(t *testing.T, identity string, readOnly bool, opts ...consoleOption) *liveServer {
	t.Helper()
	return newLiveServerOn(t, sharedCache(t, identity), testcluster.RestConfig(t, identity), identity, readOnly, opts...)
}

// newLiveServerAs is newLiveServer acting with cfg (e.g. admin impersonating a
// test's own user) and showing identity as the user's name.
func newLiveServerAs(t *testing.T, cfg *rest.Config, identity string, readOnly bool) *liveServer {
	t.Helper()
	return newLiveServerWith(t, cfg, identity, readOnly)
}

// newLiveServerWith is newLiveServerAs with what differs set by opts.
// Its cache is its own (syncedCache), stopped when the test ends: cfg may be
// any identity, and with may hand the cache to what outlives no test.
func newLiveServerWith(t *testing.T, cfg *rest.Config, identity string, readOnly bool, opts ...consoleOption) *liveServer {
	t.Helper()
	return newLiveServerOn(t, syncedCache(t, cfg, discardLog()), cfg, identity, readOnly, opts...)
}

// newLiveServerOn is a console reading from cache, acting with cfg as
// identity: the harness's console on the devcluster, what differs set by opts
// (nil ones are none).
func newLiveServerOn(t *testing.T, cache *kube.Cache, cfg *rest.Config, identity string, readOnly bool, opts ...consoleOption) *liveServer {
	t.Helper()
	access, err := kube.NewAccess(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ls := &liveServer{cache: cache}
	ls.build(t, Deps{Cluster: cache, Access: access, Writer: mustWriter(t, cfg), User: identity, ReadOnly: readOnly, Lookup: mustLookup(t, cfg)}, opts...)
	return ls
}

// mustLookup is the direct reads of a console acting as cfg.
func mustLookup(t *testing.T, cfg *rest.Config) *kube.Lookup {
	t.Helper()
	l, err := kube.NewLookup(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// mustWriter is the writes of a console acting as cfg.
func mustWriter(t *testing.T, cfg *rest.Config) *kube.Writer {
	t.Helper()
	w, err := kube.NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// syncedCache is the console's informer cache on the devcluster as cfg,
// synced, stopped when the test ends: what every console built by a test
// here reads its pages from.
func syncedCache(t *testing.T, cfg *rest.Config, log *slog.Logger) *kube.Cache {
	t.Helper()
	cache, err := kube.NewCache(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	cache.SummarizeDecidedRequests(csr.Summarize) // as main does
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go cache.Run(ctx)
	waitFor(t, "the cache to sync", 60*time.Second, cache.Ready)
	return cache
}

// strictUsers are the per-user clients of a console outside local mode: they
// never act as the console itself for a person.
func strictUsers(t *testing.T, cfg *rest.Config) *kube.Users {
	t.Helper()
	return usersOf(t, cfg, true)
}

// usersOf are the per-user clients of a console acting as cfg (with
// perUserClients), strict or, in local mode, not.
func usersOf(t *testing.T, cfg *rest.Config, strict bool) *kube.Users {
	t.Helper()
	users, err := kube.NewUsers(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	users.Strict = strict
	return users
}

// reviewAs reviews pasted tokens with the API server as cfg (token mode).
func reviewAs(cfg *rest.Config) TokenReviewer {
	return func(ctx context.Context, token string) (kube.Identity, error) { return kube.Review(ctx, cfg, token) }
}
