//go:build integration

package handlers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// sharedCaches are the informer caches of the devcluster's identities, one
// per identity for the whole test binary, as one console process keeps one
// for all its pages. A console built by newLiveServer reads from its
// identity's: each new cache would LIST every kind again, the real-world CRDs'
// megabyte schemas included (seconds per test, on 2 cores).
var sharedCaches = struct {
	sync.Mutex
	byIdentity map[string]*kube.Cache
}{byIdentity: map[string]*kube.Cache{}}

// sharedCache is identity's cache, synced and caught up with the API server:
// it holds what a new cache would (caughtUp), so a test that changed objects
// before building its console sees them as it would with a cache of its own.
// It never stops: tests must not stop it or register OnChange handlers on it
// (those would outlive the test); a test that needs either builds its own
// with syncedCache.
func sharedCache(t *testing.T, identity string) *kube.Cache {
	t.Helper()
	cfg := testcluster.RestConfig(t, identity)
	sharedCaches.Lock()
	cache, ok := sharedCaches.byIdentity[identity]
	if !ok {
		var err error
		cache, err = kube.NewCache(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			sharedCaches.Unlock()
			t.Fatal(err)
		}
		cache.SummarizeDecidedRequests(csr.Summarize) // as main does
		go cache.Run(context.Background())
		sharedCaches.byIdentity[identity] = cache
	}
	sharedCaches.Unlock()
	// A wait, not a timing assertion: the first LIST of the real-world CRDs
	// took over 30 s on a loaded 2-core machine.
	waitFor(t, "the cache to sync", 90*time.Second, cache.Ready)
	caughtUp(t, cache, cfg)
	return cache
}

// caughtUp waits until cache holds, of every kind it has synced, exactly the
// objects the API server lists, each at the resourceVersion the server has:
// what a cache synced now would hold. The LISTs are metadata only, so the
// check costs a fraction of a sync.
func caughtUp(t *testing.T, cache *kube.Cache, cfg *rest.Config) {
	t.Helper()
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var behind string
	deadline := time.Now().Add(60 * time.Second)
	for {
		if behind = lagOf(cache, client); behind == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shared cache did not catch up with the API server in 60 s: %s", behind)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lagOf says how cache differs from the API server, "" when it does not.
func lagOf(cache *kube.Cache, client metadata.Interface) string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, st := range cache.Statuses() {
		if st.State != kube.StateSynced {
			continue // forbidden to this identity, or not served: a new cache would not hold it either
		}
		k := st.Kind
		list, err := client.Resource(schema.GroupVersionResource{Group: k.Group, Version: k.Version, Resource: k.Resource}).
			List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Sprintf("%s: %v", k.Resource, err)
		}
		if len(list.Items) != st.Count {
			return fmt.Sprintf("%s: %d in the cache, %d on the server", k.Resource, st.Count, len(list.Items))
		}
		for _, item := range list.Items {
			m, err := cache.Meta(k.ID, item.Name)
			if err != nil {
				return fmt.Sprintf("%s %s: not in the cache yet", k.Resource, item.Name)
			}
			if m.GetResourceVersion() != item.ResourceVersion {
				return fmt.Sprintf("%s %s: resourceVersion %s in the cache, %s on the server", k.Resource, item.Name, m.GetResourceVersion(), item.ResourceVersion)
			}
		}
	}
	return ""
}
