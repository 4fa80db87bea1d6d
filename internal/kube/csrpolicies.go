package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// ErrPoliciesAbsent is PolicyCache.List's error while the API server serves
// no CSRApprovalPolicies (their CRD is not installed) or the console's
// identity may not list and watch them: the queue shows no verdicts, never
// an error page.
var ErrPoliciesAbsent = errors.New("kube: CSRApprovalPolicies are not served, or clusterdesk may not watch them")

// policyRecheck is how often a PolicyCache asks again whether the CRD is
// installed (or the grant given) while it is not: one LIST of at most one
// object per replica per interval.
const policyRecheck = 30 * time.Second

// PolicyCache is the one shared informer of the CSRApprovalPolicies for the
// whole process: the queue, a CSR page's policies panel, the agreement page
// and, through Cache.FollowPolicies, the registry's CSRApprovalPolicies kind
// (its lists, detail pages, editor and live rows) read the policies from it
// instead of a LIST per view. The registry's own informers are typed and
// decided once per run by discovery, while this custom resource may be
// installed, or deleted, at any time: until it is served the cache holds
// nothing and says so (ErrPoliciesAbsent), it starts its informer once a LIST
// succeeds, and it drops it (and its objects) when the resource is no longer
// served, then waits again.
type PolicyCache struct {
	dyn dynamic.Interface
	log *slog.Logger
	// recheck wakes the wait for the CRD (and a running informer's check
	// that it is still served) before policyRecheck: Recheck.
	recheck chan struct{}

	mu       sync.RWMutex
	informer cache.SharedIndexInformer
	// gen counts the changes seen (1 once the informer has synced): compiled
	// policies are rebuilt when it moves (csrpolicy.Set).
	gen       atomic.Uint64
	listeners []func()
	follower  policyFollower
}

// policyFollower is what the registry's Cache does as the policies' informer
// comes and goes (follow.go); every field may be nil.
type policyFollower struct {
	starting func(cache.SharedIndexInformer) // a new informer, before it runs: add handlers
	synced   func(cache.SharedIndexInformer) // it has synced: serve from it
	absent   func(state State, err error)    // none, for err: not served, forbidden or failing
	report   func(err error)                 // a running informer's LIST or WATCH outcome
	// changed is told of each change, after Generation has moved: in
	// the same informer handler, because client-go runs each handler on
	// its own goroutine, and a change notified from a handler of its own
	// could reach the live views before the generation moved (they would
	// compute the verdicts with the old policies and send nothing).
	changed func(name string)
}

// NewPolicyCache returns the cache reading with cfg's identity (the
// console's, like Cache); log may be nil. Run starts it.
func NewPolicyCache(cfg *rest.Config, log *slog.Logger) (*PolicyCache, error) {
	if log == nil {
		log = slog.Default()
	}
	dyn, err := dynamic.NewForConfig(clientConfig(cfg))
	if err != nil {
		return nil, err
	}
	return &PolicyCache{dyn: dyn, log: log, recheck: make(chan struct{}, 1)}, nil
}

// OnChange registers fn, called (on an informer goroutine, must not block)
// after a policy is added, changed or deleted, and when the policies stop
// being served.
func (p *PolicyCache) OnChange(fn func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listeners = append(p.listeners, fn)
}

// Recheck asks Run to check now, not at the next policyRecheck, whether the
// policies are served: the Cache calls it on every change of their CRD.
func (p *PolicyCache) Recheck() {
	select {
	case p.recheck <- struct{}{}:
	default: // one is pending already
	}
}

// Run waits until the policies are served and readable, then keeps them
// current until ctx is done; when they stop being served (the CRD deleted)
// it empties and waits again.
func (p *PolicyCache) Run(ctx context.Context) {
	res := p.dyn.Resource(CSRApprovalPolicyResource)
	for p.waitServed(ctx, res) {
		p.follow(ctx, res)
	}
}

// waitServed returns true once a LIST of the policies succeeds, false when
// ctx ends first.
func (p *PolicyCache) waitServed(ctx context.Context, res dynamic.ResourceInterface) bool {
	for {
		_, err := res.List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		p.setAbsent(err)
		if !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
			p.log.Warn("kube: CSRApprovalPolicies not readable yet, retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(policyRecheck):
		case <-p.recheck:
		}
	}
}

// follow runs one informer of the policies until ctx ends or the API server
// no longer serves them (a LIST or WATCH answers NotFound, or a Recheck's
// LIST does), and then drops it.
func (p *PolicyCache) follow(ctx context.Context, res dynamic.ResourceInterface) {
	infCtx, stop := context.WithCancel(ctx)
	defer stop()
	gone := make(chan struct{})
	var once sync.Once
	seen := func(err error) {
		if apierrors.IsNotFound(err) {
			once.Do(func() { close(gone) })
			return
		}
		if p.follower.report != nil && !errors.Is(err, context.Canceled) {
			p.follower.report(err)
		}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			list, err := res.List(ctx, o)
			seen(err)
			if err != nil {
				return nil, err // not list: a typed nil pointer would be a non-nil runtime.Object
			}
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := res.Watch(ctx, o)
			seen(err)
			return w, err
		},
	}
	inf := cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw,
		// A handful of objects: a LIST is cheap on any server (listWatch).
		watchListSemantics{unsupported: true}),
		&unstructured.Unstructured{}, cache.SharedIndexInformerOptions{ObjectDescription: "CSRApprovalPolicy"})
	changed := func(obj any) {
		p.changed()
		if p.follower.changed != nil {
			p.follower.changed(objectName(obj))
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: changed, UpdateFunc: func(_, o any) { changed(o) }, DeleteFunc: changed,
	}); err != nil {
		p.log.Error("kube: CSRApprovalPolicy informer", "err", err)
		return
	}
	if p.follower.starting != nil {
		p.follower.starting(inf)
	}
	go inf.RunWithContext(infCtx)
	synced := make(chan bool, 1)
	go func() { synced <- cache.WaitForCacheSync(infCtx.Done(), inf.HasSynced) }()
	select {
	case ok := <-synced:
		if !ok {
			return // ctx ended
		}
	case <-gone:
		p.drop()
		return
	}
	p.mu.Lock()
	p.informer = inf
	p.mu.Unlock()
	p.changed()
	if p.follower.synced != nil {
		p.follower.synced(inf)
	}
	p.log.Info("kube: CSRApprovalPolicies served, watching them")
	for {
		select {
		case <-ctx.Done():
			return
		case <-gone:
		case <-p.recheck:
			if _, err := res.List(ctx, metav1.ListOptions{Limit: 1}); !apierrors.IsNotFound(err) {
				continue
			}
		}
		p.drop()
		return
	}
}

// drop forgets the informer's policies: the resource is no longer served.
func (p *PolicyCache) drop() {
	p.log.Info("kube: CSRApprovalPolicies no longer served, dropping their cache")
	p.setAbsent(apierrors.NewNotFound(CSRApprovalPolicyResource.GroupResource(), ""))
}

// setAbsent empties the cache (if it held policies) and tells the follower
// why there are none.
func (p *PolicyCache) setAbsent(err error) {
	p.mu.Lock()
	had := p.informer != nil
	p.informer = nil
	p.mu.Unlock()
	if had {
		p.changed()
	}
	if p.follower.absent == nil {
		return
	}
	gr := CSRApprovalPolicyResource.GroupResource()
	switch {
	case apierrors.IsNotFound(err):
		p.follower.absent(StateError, fmt.Errorf("%s %s: %w", gr.Group, gr.Resource, ErrNotServed))
	case apierrors.IsForbidden(err):
		p.follower.absent(StateForbidden, err)
	default:
		p.follower.absent(StateError, err)
	}
}

func (p *PolicyCache) changed() {
	p.gen.Add(1)
	p.mu.RLock()
	ls := p.listeners
	p.mu.RUnlock()
	for _, fn := range ls {
		fn()
	}
}

// Generation moves on every change of the cached policies; 0 until the
// informer has synced.
func (p *PolicyCache) Generation() uint64 { return p.gen.Load() }

// List returns the cached policies and the generation they are of;
// ErrPoliciesAbsent until the informer has synced. The objects are the
// cache's: never modify them.
func (p *PolicyCache) List() ([]*unstructured.Unstructured, uint64, error) {
	p.mu.RLock()
	inf := p.informer
	p.mu.RUnlock()
	if inf == nil {
		return nil, 0, ErrPoliciesAbsent
	}
	// The generation is read before the list: a change between the two
	// makes the next caller rebuild again, never keep a stale set.
	gen := p.gen.Load()
	objs := inf.GetStore().List()
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out, gen, nil
}
