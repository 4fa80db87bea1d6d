package backends

import (
	"context"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// TestBackendCacheIsPerIdentity: a Service's state read as one user is served
// again to that user only, and a failed lookup is tried again.
func TestBackendCacheIsPerIdentity(t *testing.T) {
	b := NewCache()
	calls := 0
	ok := func(context.Context, admission.BackendKey) admission.Backend {
		calls++
		return admission.Backend{Checked: true, ServiceFound: true, ReadyEndpoints: 1}
	}
	fail := func(context.Context, admission.BackendKey) admission.Backend {
		calls++
		return admission.Backend{Err: "unreachable"}
	}
	ann := kube.WithIdentity(context.Background(), kube.Identity{User: "ann", Act: kube.ActWithToken, Token: "a"})
	bob := kube.WithIdentity(context.Background(), kube.Identity{User: "bob", Act: kube.ActWithToken, Token: "b"})
	svc := admission.BackendKey{Namespace: "ns", Name: "hook"}
	b.get(ann, svc, ok)
	b.get(ann, svc, ok)
	if calls != 1 {
		t.Fatalf("ann's second view should be served from the cache: %d lookups", calls)
	}
	b.get(bob, svc, ok)
	if calls != 2 {
		t.Fatalf("bob must get his own lookup: %d lookups", calls)
	}
	other := admission.BackendKey{Namespace: "ns", Name: "down"}
	b.get(ann, other, fail)
	b.get(ann, other, fail)
	if calls != 4 {
		t.Fatalf("a failed lookup must be tried again: %d lookups", calls)
	}
}
