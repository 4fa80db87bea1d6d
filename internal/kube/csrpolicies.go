package kube

import (
	"context"
	"errors"
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
// whole process, beside the kind registry's (cache.go): the queue, a CSR
// page's policies panel and the agreement page read the policies from it
// instead of a LIST per view. It is not a registry kind: the registry's
// informers are typed and decided once per run by discovery, while this
// custom resource may be installed, or not, at any time; until it is served
// the cache holds nothing and says so (ErrPoliciesAbsent), and it starts its
// informer once a LIST succeeds.
type PolicyCache struct {
	dyn dynamic.Interface
	log *slog.Logger

	mu       sync.RWMutex
	informer cache.SharedIndexInformer
	// gen counts the changes seen (1 once the informer has synced): compiled
	// policies are rebuilt when it moves (csrpolicy.Set).
	gen       atomic.Uint64
	listeners []func()
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
	return &PolicyCache{dyn: dyn, log: log}, nil
}

// OnChange registers fn, called (on an informer goroutine, must not block)
// after a policy is added, changed or deleted.
func (p *PolicyCache) OnChange(fn func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listeners = append(p.listeners, fn)
}

// Run waits until the policies are served and readable, then keeps them
// current until ctx is done.
func (p *PolicyCache) Run(ctx context.Context) {
	res := p.dyn.Resource(CSRApprovalPolicyResource)
	for {
		_, err := res.List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil {
			break
		}
		if !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
			p.log.Warn("kube: CSRApprovalPolicies not readable yet, retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(policyRecheck):
		}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return res.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return res.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, noWatchList{}),
		&unstructured.Unstructured{}, cache.SharedIndexInformerOptions{ObjectDescription: "CSRApprovalPolicy"})
	changed := func(any) { p.changed() }
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: changed, UpdateFunc: func(_, o any) { changed(o) }, DeleteFunc: changed,
	}); err != nil {
		p.log.Error("kube: CSRApprovalPolicy informer", "err", err)
		return
	}
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return
	}
	p.mu.Lock()
	p.informer = inf
	p.mu.Unlock()
	p.changed()
	<-ctx.Done()
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
