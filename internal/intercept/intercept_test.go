package intercept

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// fakeCache holds one validating and one mutating configuration, each with a
// webhook on CREATE of configmaps in namespaces labelled team=a.
type fakeCache struct {
	mutatingErr error
	noMutating  bool // the cluster serves no MutatingWebhookConfigurations
}

func rule() admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
	}
}

var teamA = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}

func (fakeCache) Kind(id kube.KindID) (kube.Kind, bool) {
	return kube.Kind{ID: id}, true
}

func (fakeCache) Webhooks() ([]*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return []*admissionregistrationv1.ValidatingWebhookConfiguration{{
		ObjectMeta: metav1.ObjectMeta{Name: "policy"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "check.example.com",
			Rules: []admissionregistrationv1.RuleWithOperations{rule()}, NamespaceSelector: teamA}},
	}}, nil
}

func (f fakeCache) MutatingWebhooks() ([]*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	if f.mutatingErr != nil {
		return nil, f.mutatingErr
	}
	return []*admissionregistrationv1.MutatingWebhookConfiguration{{
		ObjectMeta: metav1.ObjectMeta{Name: "inject"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "inject.example.com",
			Rules: []admissionregistrationv1.RuleWithOperations{rule()}, NamespaceSelector: teamA}},
	}}, nil
}

// fakeLookup answers for namespace "team-a" (labelled team=a) and serves
// configmaps in core/v1.
type fakeLookup struct {
	nsErr, listErr error
	calls          []string
}

func (l *fakeLookup) Namespace(_ context.Context, name string) (map[string]string, bool, error) {
	l.calls = append(l.calls, "namespace "+name)
	if l.nsErr != nil {
		return nil, false, l.nsErr
	}
	if name == "team-a" {
		return map[string]string{"team": "a"}, true, nil
	}
	return nil, false, nil
}

func (l *fakeLookup) ResourceLists(_ context.Context, resource string) ([]*metav1.APIResourceList, error) {
	l.calls = append(l.calls, "discovery "+resource)
	if l.listErr != nil {
		return nil, l.listErr
	}
	return []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "configmaps", Namespaced: true}}}}, nil
}

func configmaps(ns string, nsLabels map[string]string) admission.Request {
	return admission.Request{Operation: admissionregistrationv1.Create, Resource: admission.GVR{Version: "v1", Resource: "configmaps"},
		Namespace: ns, NamespaceLabels: nsLabels}
}

func TestAsk(t *testing.T) {
	all := func(kube.Kind) bool { return true }
	for _, tc := range []struct {
		name      string
		cache     fakeCache
		lookup    *fakeLookup // nil: no lookups
		mayList   func(kube.Kind) bool
		req       admission.Request
		called    []string
		notes     []string // substrings, in order
		lookedFor []string
	}{
		{"the namespace's own labels win over the typed ones", fakeCache{}, &fakeLookup{}, all, configmaps("team-a", nil),
			[]string{"inject.example.com", "check.example.com"},
			[]string{"Namespace team-a exists; its labels are used: team=a.", "Served as the same objects (equivalent for matchPolicy Equivalent): core/v1 configmaps."},
			[]string{"namespace team-a", "discovery configmaps"}},
		{"a missing namespace keeps the typed labels", fakeCache{}, &fakeLookup{}, all, configmaps("gone", map[string]string{"team": "a"}),
			[]string{"inject.example.com", "check.example.com"},
			[]string{"Namespace gone does not exist; the labels typed above are used.", "Served as the same objects"}, nil},
		{"an unreadable namespace keeps the typed labels", fakeCache{}, &fakeLookup{nsErr: errors.New("forbidden")}, all, configmaps("team-a", nil),
			nil, []string{"Could not read namespace team-a, so the labels typed above are used: forbidden", "Served as the same objects"}, nil},
		{"discovery failing judges this version only", fakeCache{}, &fakeLookup{listErr: errors.New("timeout")}, all, configmaps("team-a", nil),
			[]string{"inject.example.com", "check.example.com"},
			[]string{"Namespace team-a exists", "Could not ask discovery for the resource's equivalents, so matchPolicy Equivalent is judged on this version only: timeout"}, nil},
		{"a resource not served is matched as typed", fakeCache{}, &fakeLookup{}, all,
			admission.Request{Operation: admissionregistrationv1.Create, Resource: admission.GVR{Group: "example.com", Version: "v9", Resource: "configmaps"}},
			nil, []string{"The API server does not serve configmaps in example.com/v9; the rules are matched as typed."}, nil},
		{"no lookups: the typed labels, no notes", fakeCache{}, nil, all, configmaps("team-a", map[string]string{"team": "a"}),
			[]string{"inject.example.com", "check.example.com"}, nil, nil},
		{"mutating ones left out when not listable", fakeCache{}, nil, func(k kube.Kind) bool { return k.ID != kube.MutatingWebhooks },
			configmaps("team-a", map[string]string{"team": "a"}), []string{"check.example.com"},
			[]string{"Your Kubernetes identity may not list MutatingWebhookConfigurations: only validating webhooks are shown."}, nil},
		{"mutating ones left out when the cache fails", fakeCache{mutatingErr: errors.New("not synced")}, nil, all,
			configmaps("team-a", map[string]string{"team": "a"}), []string{"check.example.com"},
			[]string{"MutatingWebhookConfigurations are left out: not synced"}, nil},
		{"a namespace object is its own namespace: no lookup of it", fakeCache{}, &fakeLookup{}, all,
			admission.Request{Operation: admissionregistrationv1.Create, Resource: admission.GVR{Version: "v1", Resource: "namespaces"}, Namespace: "team-a"},
			nil, []string{"does not serve namespaces"}, []string{"discovery namespaces"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Asker{Cache: tc.cache, MayList: tc.mayList}
			if tc.lookup != nil {
				a.Lookup = tc.lookup
			}
			ans, err := a.Ask(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var called []string
			for _, v := range ans.Verdicts {
				if v.Called {
					called = append(called, v.Webhook)
				}
			}
			if !slices.Equal(called, tc.called) {
				t.Errorf("called %v; want %v (mutating first)", called, tc.called)
			}
			if len(ans.Notes) != len(tc.notes) {
				t.Fatalf("notes %q; want %d notes like %q", ans.Notes, len(tc.notes), tc.notes)
			}
			for i, want := range tc.notes {
				if !strings.Contains(ans.Notes[i], want) {
					t.Errorf("note %d = %q; want it to say %q", i, ans.Notes[i], want)
				}
			}
			if tc.lookedFor != nil && !slices.Equal(tc.lookup.calls, tc.lookedFor) {
				t.Errorf("lookups %v; want %v", tc.lookup.calls, tc.lookedFor)
			}
		})
	}
}
