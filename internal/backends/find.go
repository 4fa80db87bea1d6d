package backends

import (
	"context"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Lookup reads a Service and counts its ready endpoints as the signed-in user
// (kube.Lookup).
type Lookup interface {
	Service(ctx context.Context, namespace, name string) (kube.ServiceState, error)
}

// Finder is the use case. A nil Lookup looks up nothing; a nil Cache
// remembers nothing; Log defaults to slog.Default.
type Finder struct {
	Lookup  Lookup
	Cache   *Cache
	Log     *slog.Logger
	Timeout time.Duration // bounds one page's lookups; zero: no bound
}

// Hooks looks up each distinct Service the hooks call, for either kind of
// webhook, through the cache. It returns nil when there is no Lookup (the
// page then says the Services were not looked up).
func (f Finder) Hooks(ctx context.Context, hooks []admission.Hook) map[admission.BackendKey]admission.Backend {
	if f.Lookup == nil {
		return nil
	}
	ctx, cancel := f.bound(ctx)
	defer cancel()
	out := map[admission.BackendKey]admission.Backend{}
	for _, w := range hooks {
		s := w.ServiceRef()
		if s == nil {
			continue
		}
		key := admission.BackendKey{Namespace: s.Namespace, Name: s.Name}
		if _, done := out[key]; done {
			continue
		}
		if f.Cache == nil {
			out[key] = f.service(ctx, key)
			continue
		}
		out[key] = f.Cache.get(ctx, key, f.service)
	}
	return out
}

// Service looks up one Service (a CRD's conversion webhook), uncached; ok is
// false when there is no Lookup.
func (f Finder) Service(ctx context.Context, key admission.BackendKey) (b admission.Backend, ok bool) {
	if f.Lookup == nil {
		return admission.Backend{}, false
	}
	ctx, cancel := f.bound(ctx)
	defer cancel()
	return f.service(ctx, key), true
}

func (f Finder) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.Timeout > 0 {
		return context.WithTimeout(ctx, f.Timeout)
	}
	return ctx, func() {}
}

// service looks key up; a refusal names the cause, other failures are logged.
func (f Finder) service(ctx context.Context, key admission.BackendKey) admission.Backend {
	st, err := f.Lookup.Service(ctx, key.Namespace, key.Name)
	switch {
	case apierrors.IsForbidden(err):
		return admission.Backend{Err: "your identity may not read it. The API server said: " + err.Error()}
	case err != nil:
		f.log().Warn("webhook service lookup failed", "service", key, "err", err)
		return admission.Backend{Err: err.Error()}
	}
	return admission.Backend{Checked: true, ServiceFound: st.Found, ExternalName: st.ExternalName, ReadyEndpoints: st.ReadyEndpoints}
}

func (f Finder) log() *slog.Logger {
	if f.Log != nil {
		return f.Log
	}
	return slog.Default()
}
