package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// kindHeap is what one kind's cache holds on the Go heap.
type kindHeap struct {
	ID      string
	Objects int
	Bytes   int64
}

// measureKindHeaps runs clusterdesk's own cache (internal/kube) in this
// process once per kind, as a user who may list and watch only that kind, so
// the other kinds stay forbidden and empty, and reads the live heap after a
// full GC before and after it syncs. The console's figure also holds what
// pages keep (decoded CSR requests, rendered schemas); this is the cache alone.
func measureKindHeaps(ctx context.Context, admin *rest.Config, k8s kubernetes.Interface, kinds []*kindInfo, logf func(string, ...any)) ([]kindHeap, error) {
	var out []kindHeap
	for _, k := range kinds {
		kind, ok := kubeKind(k.id)
		if !ok {
			return nil, fmt.Errorf("no kube kind %q", k.id)
		}
		user, err := onlyKindUser(ctx, k8s, admin, kind)
		if err != nil {
			return nil, err
		}
		cfg := rest.CopyConfig(admin)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		h, n, err := heapOfCache(ctx, cfg, kind.ID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.id, err)
		}
		logf("memory: the %s cache holds %d objects in %s", k.id, n, size(h))
		out = append(out, kindHeap{ID: k.id, Objects: n, Bytes: h})
	}
	return out, nil
}

func kubeKind(id string) (kube.Kind, bool) {
	for _, k := range kube.AllKinds() {
		if string(k.ID) == id {
			return k, true
		}
	}
	return kube.Kind{}, false
}

// heapOfCache syncs a kube.Cache with cfg's identity and returns how much the
// live heap grew, and how many objects of kind it holds.
func heapOfCache(ctx context.Context, cfg *rest.Config, kind kube.KindID) (int64, int, error) {
	before := liveHeap()
	cache, err := kube.NewCache(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return 0, 0, err
	}
	cache.SummarizeDecidedRequests(csr.Summarize) // as the console does
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { cache.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(2 * time.Minute); !cache.Ready(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("cache not synced within 2 min: %+v", cache.Status(kind))
		}
	}
	st := cache.Status(kind)
	if st.State != kube.StateSynced {
		return 0, 0, fmt.Errorf("cache state %s: %v", st.State, st.Err)
	}
	for _, other := range cache.Statuses() {
		if other.Kind.ID != kind && other.Count > 0 {
			return 0, 0, fmt.Errorf("%s is cached too (%d objects): the identity may see more than one kind", other.Kind.ID, other.Count)
		}
	}
	after := liveHeap()
	runtime.KeepAlive(cache)
	return after - before, st.Count, nil
}

// liveHeap is the heap in use after two full collections.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// onlyKindUser makes (once) a user who may get, list and watch only kind, and
// waits until the API server's authorizer says so: the cache decides access
// once, at its start.
func onlyKindUser(ctx context.Context, k8s kubernetes.Interface, admin *rest.Config, kind kube.Kind) (string, error) {
	name := "bench-pages-only-" + string(kind.ID)
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels()},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{kind.Group}, Resources: []string{kind.Resource}, Verbs: []string{"get", "list", "watch"}}},
	}
	if _, err := k8s.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels()},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}},
	}
	if _, err := k8s.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name}
	as, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r, err := as.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: "watch", Group: kind.Group, Resource: kind.Resource,
			}},
		}, metav1.CreateOptions{})
		if err == nil && r.Status.Allowed {
			return name, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s may not watch %s 30 s after its binding: %v", name, kind.Resource, err)
		}
	}
}
