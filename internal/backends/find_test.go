package backends

import (
	"context"
	"errors"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// fakeLookup answers per Service name and counts the lookups.
type fakeLookup struct {
	states map[string]kube.ServiceState
	errs   map[string]error
	calls  int
}

func (l *fakeLookup) Service(_ context.Context, _, name string) (kube.ServiceState, error) {
	l.calls++
	return l.states[name], l.errs[name]
}

func hooks(services ...string) []admission.Hook {
	var out []admission.Hook
	for _, s := range services {
		cc := admissionregistrationv1.WebhookClientConfig{}
		if s != "" {
			cc.Service = &admissionregistrationv1.ServiceReference{Namespace: "ns", Name: s}
		}
		out = append(out, admission.Hook{Name: s + ".example.com", ClientConfig: cc})
	}
	return out
}

func TestHooks(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "locked", errors.New("no"))
	l := &fakeLookup{
		states: map[string]kube.ServiceState{"ready": {Found: true, ReadyEndpoints: 2}, "dns": {Found: true, ExternalName: true}},
		errs:   map[string]error{"locked": forbidden, "down": errors.New("connection refused")},
	}
	ann := kube.WithIdentity(context.Background(), kube.Identity{User: "ann", Act: kube.ActWithToken, Token: "a"})
	f := Finder{Lookup: l, Cache: NewCache()}
	// "" is a webhook called by URL: no Service to look up.
	got := f.Hooks(ann, hooks("ready", "ready", "dns", "absent", "locked", "down", ""))
	for _, tc := range []struct {
		svc  string
		want admission.Backend
		err  string
	}{
		{"ready", admission.Backend{Checked: true, ServiceFound: true, ReadyEndpoints: 2}, ""},
		{"dns", admission.Backend{Checked: true, ServiceFound: true, ExternalName: true}, ""},
		{"absent", admission.Backend{Checked: true}, ""},
		{"locked", admission.Backend{}, "your identity may not read it. The API server said: "},
		{"down", admission.Backend{}, "connection refused"},
	} {
		b, ok := got[admission.BackendKey{Namespace: "ns", Name: tc.svc}]
		if !ok {
			t.Errorf("%s: not looked up", tc.svc)
			continue
		}
		if !strings.Contains(b.Err, tc.err) || (tc.err == "") != (b.Err == "") {
			t.Errorf("%s: Err %q; want %q", tc.svc, b.Err, tc.err)
		}
		b.Err = ""
		if b != tc.want {
			t.Errorf("%s: %+v; want %+v", tc.svc, b, tc.want)
		}
	}
	if len(got) != 5 || l.calls != 5 {
		t.Errorf("%d Services, %d lookups; want 5 of each (one per distinct Service)", len(got), l.calls)
	}
	f.Hooks(ann, hooks("ready", "locked"))
	if l.calls != 6 {
		t.Errorf("%d lookups after a second view; want 6 (ready from the cache, the refusal tried again)", l.calls)
	}
}

func TestWithoutLookup(t *testing.T) {
	if got := (Finder{}).Hooks(context.Background(), hooks("a")); got != nil {
		t.Errorf("Hooks without a Lookup = %v; want nil (not looked up)", got)
	}
	if _, ok := (Finder{}).Service(context.Background(), admission.BackendKey{Namespace: "ns", Name: "a"}); ok {
		t.Error("Service without a Lookup reported a lookup")
	}
}

// TestServiceIsNotCached: a CRD's conversion Service is looked up on every view.
func TestServiceIsNotCached(t *testing.T) {
	l := &fakeLookup{states: map[string]kube.ServiceState{"conv": {Found: true, ReadyEndpoints: 1}}}
	f := Finder{Lookup: l, Cache: NewCache()}
	key := admission.BackendKey{Namespace: "ns", Name: "conv"}
	for range 2 {
		if b, ok := f.Service(context.Background(), key); !ok || !b.Checked || b.ReadyEndpoints != 1 {
			t.Fatalf("Service = %+v, %v", b, ok)
		}
	}
	if l.calls != 2 {
		t.Errorf("%d lookups for two views; want 2", l.calls)
	}
}
