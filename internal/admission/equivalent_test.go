package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// discovery is a trimmed copy of what kube-apiserver v1.36 answers (the hashes
// are the real ones of the devcluster), plus an older server's apps/extensions
// deployments and an aggregated API without hashes.
var discovery = []*metav1.APIResourceList{
	{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "events", StorageVersionHash: "r2yiGXH7wu8="},
		{Name: "pods", StorageVersionHash: "xPOwRZ+Yhw8="},
		{Name: "pods/status"},
		{Name: "pods/eviction"},
	}},
	{GroupVersion: "events.k8s.io/v1", APIResources: []metav1.APIResource{
		{Name: "events", StorageVersionHash: "r2yiGXH7wu8="},
	}},
	{GroupVersion: "autoscaling/v1", APIResources: []metav1.APIResource{
		{Name: "horizontalpodautoscalers", StorageVersionHash: "qwQve8ut294="},
		{Name: "horizontalpodautoscalers/status"},
	}},
	{GroupVersion: "autoscaling/v2", APIResources: []metav1.APIResource{
		{Name: "horizontalpodautoscalers", StorageVersionHash: "qwQve8ut294="},
	}},
	// Kubernetes 1.15 served deployments from apps and extensions, stored once.
	{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
		{Name: "deployments", StorageVersionHash: "8aSe+NMegvE="},
		{Name: "deployments/scale"},
	}},
	{GroupVersion: "extensions/v1beta1", APIResources: []metav1.APIResource{
		{Name: "deployments", StorageVersionHash: "8aSe+NMegvE="},
		{Name: "deployments/scale"},
		{Name: "ingresses", StorageVersionHash: "39NQlfNR+bo="},
	}},
	{GroupVersion: "networking.k8s.io/v1", APIResources: []metav1.APIResource{
		{Name: "ingresses", StorageVersionHash: "39NQlfNR+bo="},
	}},
	{GroupVersion: "metrics.k8s.io/v1beta1", APIResources: []metav1.APIResource{{Name: "pods"}}},
	{GroupVersion: "metrics.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "pods"}}},
	nil,
	{GroupVersion: "not/a/group/version"},
}

func TestEquivalents(t *testing.T) {
	tests := []struct {
		name string
		r    GVR
		sub  string
		want []GVR
	}{
		{"core events are events.k8s.io events", GVR{"", "v1", "events"}, "",
			[]GVR{{"", "v1", "events"}, {"events.k8s.io", "v1", "events"}}},
		{"and back", GVR{"events.k8s.io", "v1", "events"}, "",
			[]GVR{{"events.k8s.io", "v1", "events"}, {"", "v1", "events"}}},
		{"versions of one group", GVR{"autoscaling", "v2", "horizontalpodautoscalers"}, "",
			[]GVR{{"autoscaling", "v2", "horizontalpodautoscalers"}, {"autoscaling", "v1", "horizontalpodautoscalers"}}},
		{"subresource only where served", GVR{"autoscaling", "v1", "horizontalpodautoscalers"}, "status",
			[]GVR{{"autoscaling", "v1", "horizontalpodautoscalers"}}},
		{"apps deployments are extensions deployments", GVR{"apps", "v1", "deployments"}, "",
			[]GVR{{"apps", "v1", "deployments"}, {"extensions", "v1beta1", "deployments"}}},
		{"with their scale subresource", GVR{"extensions", "v1beta1", "deployments"}, "scale",
			[]GVR{{"extensions", "v1beta1", "deployments"}, {"apps", "v1", "deployments"}}},
		{"ingresses across groups", GVR{"networking.k8s.io", "v1", "ingresses"}, "",
			[]GVR{{"networking.k8s.io", "v1", "ingresses"}, {"extensions", "v1beta1", "ingresses"}}},
		{"a different resource with a hash is alone", GVR{"", "v1", "pods"}, "",
			[]GVR{{"", "v1", "pods"}}},
		{"no hash: same resource in the group", GVR{"metrics.k8s.io", "v1", "pods"}, "",
			[]GVR{{"metrics.k8s.io", "v1", "pods"}, {"metrics.k8s.io", "v1beta1", "pods"}}},
		{"unknown to discovery: itself and same-group versions", GVR{"example.com", "v1", "widgets"}, "",
			[]GVR{{"example.com", "v1", "widgets"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Equivalents(discovery, tc.r, tc.sub)); diff != "" {
				t.Errorf("Equivalents(%v, %q) (-want +got):\n%s", tc.r, tc.sub, diff)
			}
		})
	}
}

// TestInterceptsAcrossGroups: a rule for one group catches the request made
// through the other with matchPolicy Equivalent, and not with Exact.
func TestInterceptsAcrossGroups(t *testing.T) {
	rule := func(group, version, resource string) Hook {
		return Hook{Name: "h", MatchPolicy: "Equivalent", Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{"CREATE"},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource}},
		}}}
	}
	exact := rule("apps", "v1", "deployments")
	exact.MatchPolicy = "Exact"
	tests := []struct {
		name   string
		hook   Hook
		req    GVR
		called bool
		via    *GVR
	}{
		{"apps rule, extensions request", rule("apps", "v1", "deployments"), GVR{"extensions", "v1beta1", "deployments"}, true, &GVR{"apps", "v1", "deployments"}},
		{"exact apps rule, extensions request", exact, GVR{"extensions", "v1beta1", "deployments"}, false, nil},
		{"events.k8s.io rule, core request", rule("events.k8s.io", "v1", "events"), GVR{"", "v1", "events"}, true, &GVR{"events.k8s.io", "v1", "events"}},
		{"core rule, core request", rule("", "v1", "events"), GVR{"", "v1", "events"}, true, nil},
		{"ingress rule, deployment request", rule("networking.k8s.io", "v1", "ingresses"), GVR{"apps", "v1", "deployments"}, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := Request{Operation: "CREATE", Resource: tc.req, Namespace: "default"}
			v := Intercepts([]Config{{Kind: Validating, Name: "c", Hooks: []Hook{tc.hook}}}, req, Equivalents(discovery, tc.req, ""))
			if len(v) != 1 || v[0].Called != tc.called || !cmp.Equal(v[0].Via, tc.via) {
				t.Errorf("verdict %+v, want called %v via %v", v, tc.called, tc.via)
			}
		})
	}
}

func TestInterceptsOrderMutatingFirst(t *testing.T) {
	configs := []Config{
		{Kind: Validating, Name: "a-validating", Hooks: []Hook{{Name: "v1"}}},
		{Kind: Mutating, Name: "z-mutating", Hooks: []Hook{{Name: "m2"}, {Name: "m3"}}},
		{Kind: Mutating, Name: "b-mutating", Hooks: []Hook{{Name: "m1"}}},
	}
	var got []string
	for _, v := range Intercepts(configs, Request{Operation: "CREATE", Resource: GVR{"", "v1", "configmaps"}}, nil) {
		got = append(got, string(v.Kind)+" "+v.Config+" "+v.Webhook)
	}
	want := []string{"Mutating b-mutating m1", "Mutating z-mutating m2", "Mutating z-mutating m3", "Validating a-validating v1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
