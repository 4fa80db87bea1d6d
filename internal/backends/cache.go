// Package backends looks up the Services that webhooks call (one GET and one
// EndpointSlice LIST each, as the signed-in user) when a webhook or CRD page
// is viewed, and remembers the answers per user briefly.
package backends

import (
	"context"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// backendTTL is how long a webhook Service's state, read as one user, serves
// that user's next views. A webhook configuration page looks up each distinct
// Service (a GET and an EndpointSlice LIST): three API requests for a page
// that should cost about one. Ten seconds keeps a reload or a walk through
// the configurations cheap while a Service that loses its endpoints shows so
// within seconds.
const backendTTL = 10 * time.Second

// backendCacheSize bounds the cache: users × Services seen within the TTL.
const backendCacheSize = 4096

// Cache remembers Service lookups per identity (what a user may read is
// theirs: an answer is never served to another identity). It is safe for
// concurrent use.
type Cache struct {
	lru *expirable.LRU[string, admission.Backend]
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{lru: expirable.NewLRU[string, admission.Backend](backendCacheSize, nil, backendTTL)}
}

// get answers key's backend for the identity in ctx, looking it up when the
// cache has no fresh answer. Failed lookups (forbidden, unreachable) are not
// remembered: the next view tries again.
func (b *Cache) get(ctx context.Context, key admission.BackendKey, lookup func(context.Context, admission.BackendKey) admission.Backend) admission.Backend {
	who := ""
	if id, ok := kube.IdentityFrom(ctx); ok {
		who = id.Key()
	}
	k := who + "\x00" + key.Namespace + "\x00" + key.Name
	if be, ok := b.lru.Get(k); ok {
		return be
	}
	be := lookup(ctx, key)
	if be.Checked {
		b.lru.Add(k, be)
	}
	return be
}
