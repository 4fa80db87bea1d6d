package admission

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestMatchResources(t *testing.T) {
	rule := func(names ...string) admissionregistrationv1.NamedRuleWithOperations {
		return admissionregistrationv1.NamedRuleWithOperations{ResourceNames: names, RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}
	}
	req := Request{Operation: admissionregistrationv1.Create, Resource: GVR{"apps", "v1beta1", "deployments"}, Namespace: "ns",
		NamespaceLabels: map[string]string{"env": "prod"}, ObjectLabels: map[string]string{"app": "a"}, Name: "web"}
	equivalents := []GVR{req.Resource, {"apps", "v1", "deployments"}}
	tests := []struct {
		name string
		mr   *admissionregistrationv1.MatchResources
		want bool
		via  GVR
	}{
		{"no matchResources", nil, true, req.Resource},
		{"no resourceRules", &admissionregistrationv1.MatchResources{}, true, req.Resource},
		{"equivalent by default", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule()}}, true, GVR{"apps", "v1", "deployments"}},
		{"exact", &admissionregistrationv1.MatchResources{MatchPolicy: ptr.To(admissionregistrationv1.Exact), ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule()}}, false, GVR{}},
		{"resourceNames hit", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule("web")}}, true, GVR{"apps", "v1", "deployments"}},
		{"resourceNames miss", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule("db")}}, false, GVR{}},
		{"excluded", &admissionregistrationv1.MatchResources{ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule()}}, false, GVR{}},
		{"namespaceSelector miss", &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}}, false, GVR{}},
		{"objectSelector hit", &admissionregistrationv1.MatchResources{ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}}, true, req.Resource},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, via, why := MatchResources("Binding", tt.mr, req, equivalents)
			if ok != tt.want || via != tt.via {
				t.Errorf("got %v via %v, want %v via %v (%v)", ok, via, tt.want, tt.via, why)
			}
			if len(why) == 0 {
				t.Error("no reason given")
			}
		})
	}
}
