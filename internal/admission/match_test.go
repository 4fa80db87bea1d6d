package admission

import (
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func rule(ops []admissionregistrationv1.OperationType, group, version string, resources []string, scope admissionregistrationv1.ScopeType) admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{
		APIGroups: []string{group}, APIVersions: []string{version}, Resources: resources, Scope: ptr.To(scope)}}
}

var (
	create = []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	all    = []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}
	del    = []admissionregistrationv1.OperationType{admissionregistrationv1.Delete}
	upd    = []admissionregistrationv1.OperationType{admissionregistrationv1.Update}
)

func matchConfig() []Config {
	hook := func(name string, r admissionregistrationv1.RuleWithOperations, change func(*admissionregistrationv1.ValidatingWebhook)) admissionregistrationv1.ValidatingWebhook {
		w := admissionregistrationv1.ValidatingWebhook{Name: name, Rules: []admissionregistrationv1.RuleWithOperations{r}}
		if change != nil {
			change(&w)
		}
		return w
	}
	exact := func(w *admissionregistrationv1.ValidatingWebhook) {
		w.MatchPolicy = ptr.To(admissionregistrationv1.Exact)
	}
	b := FromValidating(&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "b"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			hook("cm-create", rule(create, "", "v1", []string{"configmaps"}, "*"), nil),
			hook("cm-all", rule(all, "", "v1", []string{"configmaps"}, "*"), nil),
			hook("ns-prod", rule(create, "", "v1", []string{"configmaps", "namespaces"}, "*"), func(w *admissionregistrationv1.ValidatingWebhook) {
				w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
			}),
			hook("obj-blue", rule(create, "", "v1", []string{"configmaps"}, "*"), func(w *admissionregistrationv1.ValidatingWebhook) {
				w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "blue"}}
			}),
			hook("obj-blue-delete", rule(del, "", "v1", []string{"configmaps"}, "*"), func(w *admissionregistrationv1.ValidatingWebhook) {
				w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "blue"}}
			}),
			hook("cluster-scope", rule(create, "", "v1", []string{"namespaces", "configmaps"}, admissionregistrationv1.ClusterScope), nil),
			hook("namespaced-scope", rule(create, "", "v1", []string{"namespaces", "configmaps"}, admissionregistrationv1.NamespacedScope), nil),
			hook("status", rule(upd, "example.com", "v1", []string{"probes/status"}, "*"), nil),
			hook("all-sub", rule(upd, "example.com", "v1", []string{"probes/*"}, "*"), nil),
			hook("equivalent", rule(create, "example.com", "v1", []string{"probes"}, "*"), nil),
			hook("exact", rule(create, "example.com", "v1", []string{"probes"}, "*"), exact),
			hook("cel", rule(create, "", "v1", []string{"configmaps"}, "*"), func(w *admissionregistrationv1.ValidatingWebhook) {
				w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "c", Expression: "true"}}
			}),
			hook("webhook-configs", rule(all, "admissionregistration.k8s.io", "*", []string{"*"}, "*"), nil),
		}})
	a := FromValidating(&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{hook("first", rule(all, "*", "*", []string{"*/*"}, "*"), nil)}})
	return []Config{b, a}
}

func called(vs []Verdict) []string {
	var out []string
	for _, v := range vs {
		if v.Called {
			out = append(out, v.Webhook)
		}
	}
	return out
}

func TestIntercepts(t *testing.T) {
	cm := GVR{"", "v1", "configmaps"}
	probesV1, probesV2 := GVR{"example.com", "v1", "probes"}, GVR{"example.com", "v2", "probes"}
	prod := map[string]string{"env": "prod"}
	blue := map[string]string{"team": "blue"}
	cases := []struct {
		name string
		req  Request
		eq   []GVR
		want []string
	}{
		{"create in prod, blue", Request{Operation: "CREATE", Resource: cm, Namespace: "a", NamespaceLabels: prod, ObjectLabels: blue}, nil,
			[]string{"first", "cm-create", "cm-all", "ns-prod", "obj-blue", "namespaced-scope", "cel"}},
		{"create in dev", Request{Operation: "CREATE", Resource: cm, Namespace: "b"}, nil,
			[]string{"first", "cm-create", "cm-all", "namespaced-scope", "cel"}},
		{"update", Request{Operation: "UPDATE", Resource: cm, Namespace: "a", NamespaceLabels: prod, ObjectLabels: blue}, nil,
			[]string{"first", "cm-all"}},
		{"delete matches the stored object's labels", Request{Operation: "DELETE", Resource: cm, Namespace: "a", OldObjectLabels: blue}, nil,
			[]string{"first", "cm-all", "obj-blue-delete"}},
		{"delete of an unlabelled object", Request{Operation: "DELETE", Resource: cm, Namespace: "a"}, nil,
			[]string{"first", "cm-all"}},
		{"namespace objects are cluster-scoped and matched by their own labels", Request{Operation: "CREATE", Resource: namespacesGVR, Namespace: "new", NamespaceLabels: prod}, nil,
			[]string{"first", "ns-prod", "cluster-scope"}},
		{"namespace without the label", Request{Operation: "CREATE", Resource: namespacesGVR, Namespace: "new"}, nil,
			[]string{"first", "cluster-scope"}},
		{"status subresource", Request{Operation: "UPDATE", Resource: probesV1, Subresource: "status", Namespace: "a"}, nil,
			[]string{"first", "status", "all-sub"}},
		{"probes/* covers probes too, probes/status does not", Request{Operation: "UPDATE", Resource: probesV1, Namespace: "a"}, nil,
			[]string{"first", "all-sub"}},
		{"exact version", Request{Operation: "CREATE", Resource: probesV1, Namespace: "a"}, []GVR{probesV1, probesV2},
			[]string{"first", "equivalent", "exact"}},
		{"other version: Equivalent only", Request{Operation: "CREATE", Resource: probesV2, Namespace: "a"}, []GVR{probesV1, probesV2},
			[]string{"first", "equivalent"}},
		{"webhook configurations are exempt", Request{Operation: "CREATE", Resource: GVR{"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"}}, nil,
			nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vs := Intercepts(matchConfig(), tc.req, tc.eq)
			if got := called(vs); !slices.Equal(got, tc.want) {
				t.Errorf("called %v, want %v", got, tc.want)
			}
			if vs[0].Config != "a" {
				t.Errorf("configurations not in name order: first is %q", vs[0].Config)
			}
			for _, v := range vs {
				if len(v.Reasons) == 0 {
					t.Errorf("%s: no reason", v.Webhook)
				}
				if v.Webhook == "equivalent" && v.Called && tc.req.Resource == probesV2 && (v.Via == nil || *v.Via != probesV1) {
					t.Errorf("equivalent: via %v", v.Via)
				}
			}
		})
	}
}
