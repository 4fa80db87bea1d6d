package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// newInformer returns the (not yet started) informer of k at its served version.
// report receives the outcome of every LIST and WATCH request the informer makes.
func (c *Cache) newInformer(k Kind, report func(error)) cache.SharedIndexInformer {
	served, err := servedAs(k)
	if err != nil {
		// Discovery picks the version among the registry's: a mismatch is a programming error.
		panic(err.Error())
	}
	lw, obj := served.watch(c, report)
	// No resync: nothing here reconciles, so periodic replays of the store would only
	// wake the live hub for nothing.
	inf := cache.NewSharedIndexInformerWithOptions(lw, obj, cache.SharedIndexInformerOptions{ObjectDescription: k.Singular})
	// What no page uses stays out of the cache, and CRD schemas stay packed
	// (see Transform). SetTransform fails only on a started informer, and this
	// one is new.
	c.mu.RLock()
	transform := TransformWith(c.schemas, c.summarize)
	c.mu.RUnlock()
	if err := inf.SetTransform(transform); err != nil {
		panic(fmt.Sprintf("kube: %s informer: %v", k.ID, err))
	}
	return inf
}

// listWatchClient is the part of a generated typed client an informer needs.
type listWatchClient[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// listWatch adapts a typed client to an informer, reporting each request's outcome.
// While the API server cannot be reached, requests are retried at a quicker pace
// than the reflector's backoff (untilReachable).
//
// It opts out of client-go's WatchListClient feature (on by default since v0.35: the
// initial list is streamed as a WATCH with sendInitialEvents=true). API servers whose
// WatchList feature gate is off, 1.28 among them, refuse that request
// ("sendInitialEvents is forbidden for watch unless the WatchList feature gate is
// enabled", kubernetes#135583). The reflector does fall back to a plain LIST after any
// watch-list error (kubernetes#120984; #135591 lowered that log to V(4)), but then every
// (re)list against such a server starts with a refused request, and the requests, hence
// the errors Status reports, differ by server version. These collections hold tens or
// hundreds of objects, so streaming them saves nothing. The opt-out is per informer,
// through the interface the reflector consults
// (watchlist.DoesClientNotSupportWatchListSemantics, also used in-tree by the
// apiserver's cacher), not the process-wide gate (KUBE_FEATURE_WatchListClient=false or
// features.ReplaceFeatureGates), which belongs to the binary, not to a library.
func listWatch[L runtime.Object](c listWatchClient[L], report func(error)) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list, err := untilReachable(ctx, func() (L, error) { return c.List(ctx, opts) }, report)
			report(err)
			if err != nil {
				return nil, err // not list: a typed nil pointer would be a non-nil runtime.Object
			}
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w, err := untilReachable(ctx, func() (watch.Interface, error) { return c.Watch(ctx, opts) }, report)
			report(err)
			return w, err
		},
	}, noWatchList{})
}

// noWatchList tells the reflector not to use watch-list requests; see listWatch.
type noWatchList struct{}

// IsWatchListSemanticsUnSupported is the method the reflector looks for.
func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }
