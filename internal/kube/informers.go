package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/version"
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
// streams says whether the informer may use client-go's WatchListClient feature
// (on by default since v0.35): its initial list comes as a WATCH with
// sendInitialEvents=true, one object at a time, each transformed (Transform) as it
// arrives. A plain LIST decodes the whole collection in one go before the first
// object is transformed: at 50,000 CSRs that is ~84 MiB of response and every
// request's PEM at once, a peak the Go runtime keeps as RSS long after (issue 27
// point 3). API servers whose WatchList feature gate is off refuse the request
// ("sendInitialEvents is forbidden for watch unless the WatchList feature gate is
// enabled", kubernetes#135583); the reflector then falls back to a plain LIST
// (kubernetes#120984), but every (re)list against such a server would start with a
// refused request, and the requests, hence the errors Status reports, would differ by
// server version. So streams is chosen from the server's version
// (streamsInitialLists), and the fallback covers a server whose gate was turned off.
// The choice is per informer, through the interface the reflector consults
// (watchlist.DoesClientNotSupportWatchListSemantics, also used in-tree by the
// apiserver's cacher), not the process-wide gate (KUBE_FEATURE_WatchListClient=false or
// features.ReplaceFeatureGates), which belongs to the binary, not to a library.
func listWatch[L runtime.Object](c listWatchClient[L], report func(error), streams bool) cache.ListerWatcher {
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
	}, watchListSemantics{unsupported: !streams})
}

// streamsInitialLists reports whether an API server of gitVersion ("v1.36.3")
// streams initial lists by default: its WatchList feature gate was beta and on
// in 1.32, off again in 1.33, and on from 1.34. Before 1.32 it was alpha, off.
// An unparsable version says no (a plain LIST works everywhere).
func streamsInitialLists(gitVersion string) bool {
	v, err := version.ParseGeneric(gitVersion)
	if err != nil || v.Major() != 1 {
		return err == nil && v.Major() > 1
	}
	return v.Minor() == 32 || v.Minor() >= 34
}

// watchListSemantics tells the reflector whether to use watch-list requests; see
// listWatch.
type watchListSemantics struct{ unsupported bool }

// IsWatchListSemanticsUnSupported is the method the reflector looks for.
func (w watchListSemantics) IsWatchListSemanticsUnSupported() bool { return w.unsupported }
