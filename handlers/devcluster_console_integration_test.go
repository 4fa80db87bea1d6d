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
)

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
	users, err := kube.NewUsers(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	users.Strict = true
	return users
}
