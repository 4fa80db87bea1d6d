package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// State is where a kind's cache stands.
type State string

// The states of a kind's cache.
const (
	StateSyncing   State = "syncing"   // discovery, the access check or the first LIST is under way
	StateSynced    State = "synced"    // the cache holds the kind and its watch is up
	StateForbidden State = "forbidden" // the cache's identity may not list and watch the kind
	StateError     State = "error"     // see Err: API server unreachable, watch lost, or kind not served
)

// KindStatus is a kind's cache status, for readiness and for page banners. State error
// with a non-zero SyncedAt is a watch lost after a sync: the listers keep serving the
// cached objects, which may be stale, while the informer retries.
type KindStatus struct {
	Kind     Kind
	State    State
	Err      error     // why State is error or forbidden; nil otherwise
	Count    int       // objects in the cache; 0 before the first sync
	SyncedAt time.Time // when the cache last became synced (first sync, or recovery)
}

// Cache holds one shared informer per kind for the whole process, so the number of
// watches on the API server does not grow with the number of browsers. It reads with
// the identity of the rest.Config it was built from; callers must check the user's own
// access before serving from it.
type Cache struct {
	log    *slog.Logger
	k8s    kubernetes.Interface
	ext    apiextensionsclient.Interface
	access *Access
	// schemas holds the CRD schemas the cache's objects leave out (Transform).
	schemas *CRDSchemas
	// summarize is what the CSR informer keeps of a decided request
	// (csr_request.go); nil: the PEM.
	summarize RequestSummarizer
	// policies is the CSRApprovalPolicies' informer, the source of the
	// followed kind (follow.go); Run runs it.
	policies *PolicyCache

	mu         sync.RWMutex
	discovered bool
	version    string
	kinds      map[KindID]*kindState
	listeners  []func(id KindID, name string)
	// objectListeners receive each observed change with its objects (observe.go).
	objectListeners []func(ObjectChange)
}

type kindState struct {
	kind     Kind
	state    State
	err      error
	syncedAt time.Time
	decided  bool // served and allowed (informer started), forbidden, or not served
	synced   bool // the informer has synced once; its store is usable from then on
	informer cache.SharedIndexInformer
	// changes counts the kind's notifications (notify), each bumped before
	// the listeners are told; counted is the object count taken at a
	// value of it. The store has no length: counting is a list of every key
	// (53,000 strings' headers for the CSRs of a large cluster, 168 MB over
	// 100 page views, each of which shows every kind's count), so Status
	// counts again only after an event.
	changes atomic.Uint64
	counted atomic.Pointer[objectCount]
}

// objectCount is a kind's object count as of a value of kindState.changes.
type objectCount struct {
	changes uint64
	n       int
}

// NewCache returns a Cache reading with the identity in cfg; log may be nil for
// slog.Default. It builds clients but does no network I/O: Run does.
func NewCache(cfg *rest.Config, log *slog.Logger) (*Cache, error) {
	if log == nil {
		log = slog.Default()
	}
	cfg = clientConfig(cfg)
	cfg.WarningHandler, cfg.WarningHandlerWithContext = nil, &warningLog{log: log}
	k8s, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cache client: %w", err)
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cache client: %w", err)
	}
	c := &Cache{
		log:     log,
		k8s:     k8s,
		ext:     ext,
		access:  newAccess(k8s.AuthorizationV1().SelfSubjectAccessReviews()),
		schemas: NewCRDSchemas(),
		kinds:   map[KindID]*kindState{},
	}
	for _, k := range AllKinds() {
		c.kinds[k.ID] = &kindState{kind: k, state: StateSyncing}
	}
	if c.policies, err = NewPolicyCache(cfg, log); err != nil {
		return nil, fmt.Errorf("cache client: %w", err)
	}
	c.followPolicies(c.policies)
	return c, nil
}

// warningLog logs each distinct API server warning once. The informers repeat their
// requests for the life of the process, and client-go's default handler would write
// the same warning (say, "flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema is
// deprecated") to stderr on every re-watch.
type warningLog struct {
	log  *slog.Logger
	seen sync.Map
}

func (w *warningLog) HandleWarningHeaderWithContext(_ context.Context, code int, _ string, message string) {
	if code != 299 || message == "" {
		return
	}
	if _, seen := w.seen.LoadOrStore(message, true); !seen {
		w.log.Warn("kube: API server warning", "warning", message)
	}
}

// OnChange registers fn to be called after a cached object of a kind is added, updated
// or deleted (name is the object's), and after a kind's status changes (name is "").
// fn runs on an informer goroutine and must not block; a live hub should coalesce.
func (c *Cache) OnChange(fn func(id KindID, name string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listeners = append(c.listeners, fn)
}

// Run fills the cache and keeps it current until ctx is done; call it once. An
// unreachable API server is not fatal: discovery and access checks are retried every
// few seconds, with the error in every kind's Status meanwhile. Discovery chooses the
// flowcontrol version (v1 if served, else v1beta3); then each kind the identity may
// list and watch gets its informer, and each other kind becomes forbidden. Access is
// decided once per Run: a kind forbidden at start stays so until the process restarts.
// The CSRApprovalPolicies are the exception: their informer follows their CRD
// (FollowPolicies).
func (c *Cache) Run(ctx context.Context) {
	// Informers log through klog's contextual logger; send that to our slog handler.
	ctx = klog.NewContext(ctx, logr.FromSlogHandler(c.log.Handler()))
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.policies.Run(ctx)
	}()

	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: 5 * time.Second}
	for !c.start(ctx, &wg) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff.Step()):
		}
	}
	<-ctx.Done()
}

// start does what is left of discovery, access checks and informer starts, and
// reports whether every kind is decided.
func (c *Cache) start(ctx context.Context, wg *sync.WaitGroup) bool {
	if !c.isDiscovered() {
		if err := c.discover(); err != nil {
			c.failUndecided(fmt.Errorf("discovery: %w", err))
			return false
		}
	}
	// One log line per distinct problem, not one per kind and retry.
	var problems []string
	defer func() {
		if len(problems) > 0 {
			c.log.Warn("kube: kinds not available yet, retrying", "problems", problems)
		}
	}()
	done := true
	for _, k := range c.undecided() {
		list, err := c.access.Can(ctx, "list", k.Group, k.Resource, "", "")
		watch := false
		if err == nil && list {
			watch, err = c.access.Can(ctx, "watch", k.Group, k.Resource, "", "")
		}
		switch {
		case err != nil:
			if c.setState(k.ID, StateError, err) {
				problems = append(problems, err.Error())
			}
			done = false
		case !list || !watch:
			c.decide(k.ID, nil)
			c.log.Warn("kube: forbidden, not caching", "kind", k.ID)
			c.setState(k.ID, StateForbidden, apierrors.NewForbidden(
				schema.GroupResource{Group: k.Group, Resource: k.Resource}, "",
				errors.New("clusterdesk's own identity may not list and watch them")))
		default:
			c.startInformer(ctx, wg, k)
		}
	}
	return done
}

// discover records the server version and each kind's served version.
func (c *Cache) discover() error {
	info, err := c.k8s.Discovery().ServerVersion()
	if err != nil {
		return err
	}
	groups, err := c.k8s.Discovery().ServerGroups()
	if err != nil {
		return err
	}
	served := map[string][]string{}
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			served[g.Name] = append(served[g.Name], v.Version)
		}
	}

	// A group version can be served without every resource of it: Kubernetes
	// 1.28 serves admissionregistration.k8s.io/v1 (webhooks) but its
	// ValidatingAdmissionPolicies only in v1beta1/v1alpha1. So the resource
	// itself must be listed in its group version, asked once per version.
	resources := map[string][]string{}
	servesResource := func(group, version, resource string) bool {
		if !slices.Contains(served[group], version) {
			return false
		}
		gv := version
		if group != "" {
			gv = group + "/" + version
		}
		names, asked := resources[gv]
		if !asked {
			list, err := c.k8s.Discovery().ServerResourcesForGroupVersion(gv)
			if err != nil || list == nil {
				// Unknown rather than absent: keep the group-level answer.
				resources[gv] = nil
				return true
			}
			for _, r := range list.APIResources {
				names = append(names, r.Name)
			}
			resources[gv] = names
		}
		return names == nil || slices.Contains(names, resource)
	}

	// The discovery calls are made outside the lock: first what to ask, then ask.
	c.mu.Lock()
	kinds := make(map[KindID]Kind, len(c.kinds))
	for id, ks := range c.kinds {
		kinds[id] = ks.kind
	}
	c.mu.Unlock()
	chosen := make(map[KindID]int, len(kinds))
	for id, k := range kinds {
		if isFollowed(id) {
			continue // its source decides when it is served (follow.go)
		}
		chosen[id] = slices.IndexFunc(candidateVersions(k), func(v string) bool { return servesResource(k.Group, v, k.Resource) })
	}

	c.mu.Lock()
	c.discovered, c.version = true, info.GitVersion
	var notServed []KindID
	for id, ks := range c.kinds {
		if isFollowed(id) {
			continue
		}
		candidates := candidateVersions(ks.kind)
		i := chosen[id]
		if i < 0 {
			ks.decided, ks.state = true, StateError
			ks.err = fmt.Errorf("%s %s: %w", ks.kind.Group, ks.kind.Resource, ErrNotServed)
			notServed = append(notServed, ks.kind.ID)
			continue
		}
		ks.kind.Version = candidates[i]
	}
	c.mu.Unlock()

	c.log.Info("kube: discovered API server", "version", info.GitVersion, "notServed", notServed)
	for _, id := range notServed {
		c.notify(id, "")
	}
	return nil
}

func (c *Cache) startInformer(ctx context.Context, wg *sync.WaitGroup, k Kind) {
	inf := c.newInformer(k, func(err error) { c.observe(k.ID, err) })
	// The handler replaces client-go's, which only logs: Status shows the lost watch.
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) { c.observe(k.ID, err) })
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.notify(k.ID, objectName(obj)) },
		UpdateFunc: func(_, obj any) { c.notify(k.ID, objectName(obj)) },
		DeleteFunc: func(obj any) { c.notify(k.ID, objectName(obj)) },
	})
	c.observeObjects(k.ID, inf)
	c.decide(k.ID, inf)
	c.setState(k.ID, StateSyncing, nil)

	wg.Add(2)
	go func() {
		defer wg.Done()
		inf.RunWithContext(ctx)
	}()
	go func() {
		defer wg.Done()
		if cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			c.markSynced(k.ID)
		}
	}()
}

// objectName returns the name of an informer's object, also of a tombstone.
func objectName(obj any) string {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Key // cluster-scoped: the key is the name
	}
	if o, ok := obj.(interface{ GetName() string }); ok {
		return o.GetName()
	}
	return ""
}

// observe records the outcome of an informer's LIST or WATCH: an error marks the watch
// lost, a success after errors marks it recovered.
func (c *Cache) observe(id KindID, err error) {
	switch {
	case err == nil:
		c.mu.Lock()
		ks := c.kinds[id]
		recovered := ks.state == StateError
		if recovered {
			ks.err, ks.state = nil, StateSyncing
			if ks.synced {
				ks.state, ks.syncedAt = StateSynced, time.Now()
			}
		}
		c.mu.Unlock()
		if recovered {
			c.log.Info("kube: watch recovered", "kind", id)
			c.notify(id, "")
		}
	case benignWatchError(err):
	default:
		c.mu.Lock()
		ks := c.kinds[id]
		lost := ks.state != StateError
		ks.state, ks.err = StateError, err
		c.mu.Unlock()
		if lost {
			c.log.Warn("kube: lost watch", "kind", id, "err", err)
			c.notify(id, "")
		}
	}
}

// benignWatchError reports errors that end a watch in normal operation: the reflector
// lists or re-watches at once, and a real outage shows in the next request's error.
func benignWatchError(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.Canceled) || apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

func (c *Cache) markSynced(id KindID) {
	c.mu.Lock()
	ks := c.kinds[id]
	ks.synced, ks.syncedAt = true, time.Now()
	if ks.state == StateSyncing {
		ks.state = StateSynced
	}
	version := ks.kind.Version
	c.mu.Unlock()
	c.log.Info("kube: synced", "kind", id, "version", version)
	c.notify(id, "")
}

func (c *Cache) isDiscovered() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.discovered
}

func (c *Cache) undecided() []Kind {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []Kind
	for _, k := range AllKinds() {
		if ks := c.kinds[k.ID]; !ks.decided && !isFollowed(k.ID) {
			out = append(out, ks.kind)
		}
	}
	return out
}

func (c *Cache) decide(id KindID, inf cache.SharedIndexInformer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kinds[id].decided, c.kinds[id].informer = true, inf
}

// failUndecided puts err on every kind that has no informer and is not settled.
func (c *Cache) failUndecided(err error) {
	changed := false
	for _, k := range c.undecided() {
		changed = c.setState(k.ID, StateError, err) || changed
	}
	if changed {
		c.log.Warn("kube: API server not available yet, retrying", "err", err)
	}
}

// setState sets a kind's state and reports whether that changed it.
func (c *Cache) setState(id KindID, s State, err error) bool {
	c.mu.Lock()
	ks := c.kinds[id]
	changed := ks.state != s || fmt.Sprint(ks.err) != fmt.Sprint(err)
	ks.state, ks.err = s, err
	c.mu.Unlock()
	if changed {
		c.notify(id, "")
	}
	return changed
}

// notify tells the listeners of a change of a kind's object (name) or
// status (""). Every change of a kind's store or informer comes through here
// (the informers' handlers, the followed policies' own), so it is also what
// makes Status count the kind again (kindState.changes), before the
// listeners: a page they prompt counts afresh.
func (c *Cache) notify(id KindID, name string) {
	c.mu.RLock()
	listeners := c.listeners
	ks := c.kinds[id]
	c.mu.RUnlock()
	if ks != nil {
		ks.changes.Add(1)
	}
	for _, fn := range listeners {
		fn(id, name)
	}
}

// Ready reports whether discovery is done and every kind is synced or settled as
// forbidden or not served. A watch lost after the first sync does not make the cache
// unready: its data is still there and Status tells pages; failing readiness would
// take every replica out of the load balancer at once for an API server problem.
func (c *Cache) Ready() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.discovered {
		return false
	}
	for _, ks := range c.kinds {
		// The followed kind is decided by its PolicyCache's first answer
		// (follow.go): served and synced, not served, forbidden or failing.
		if !ks.decided || (ks.informer != nil && !ks.synced) {
			return false
		}
	}
	return true
}

// Status returns the status of one kind; an unknown id has State error.
func (c *Cache) Status(id KindID) KindStatus {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ks, ok := c.kinds[id]
	if !ok {
		return KindStatus{Kind: Kind{ID: id}, State: StateError, Err: fmt.Errorf("unknown kind %q", id)}
	}
	st := KindStatus{Kind: ks.kind, State: ks.state, Err: ks.err, SyncedAt: ks.syncedAt}
	if ks.synced {
		st.Count = ks.count()
	}
	return st
}

// count is the informer's object count, listed again only after an event
// (see kindState.changes). An event the handler has not seen yet is counted
// after it is: the count trails the store by as much as the live updates do.
func (ks *kindState) count() int {
	at := ks.changes.Load()
	if m := ks.counted.Load(); m != nil && m.changes == at {
		return m.n
	}
	n := len(ks.informer.GetStore().ListKeys())
	ks.counted.Store(&objectCount{changes: at, n: n})
	return n
}

// Statuses returns the status of every kind, in AllKinds order.
func (c *Cache) Statuses() []KindStatus {
	var out []KindStatus
	for _, k := range AllKinds() {
		out = append(out, c.Status(k.ID))
	}
	return out
}

// ServerVersion returns the API server's version ("v1.36.3"), or "" before discovery.
func (c *Cache) ServerVersion() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.version
}

// Kind returns the kind id with, after discovery, its served version.
func (c *Cache) Kind(id KindID) (Kind, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ks, ok := c.kinds[id]
	if !ok {
		return Kind{}, false
	}
	return ks.kind, true
}
