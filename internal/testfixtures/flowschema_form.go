package testfixtures

import "github.com/clusterdesk/clusterdesk/internal/flowschemaform/form"

// TwoRuleFlowSchemaForm is a FlowSchema form as a person fills it: two rules,
// every row kind (subjects of each kind, resource rules with and without
// namespaces, a non-resource rule).
func TwoRuleFlowSchemaForm() form.Form {
	return form.Form{
		Name: "batch", Precedence: "900", PriorityLevel: "workload-low", Distinguisher: "ByUser",
		Rules: []form.Rule{
			{
				Subjects: []form.Subject{
					{Kind: "User", Name: "alice"},
					{Kind: "ServiceAccount", Namespace: "ci", Name: "*"},
				},
				ResourceRules: []form.ResourceRule{
					{Verbs: []string{"get", "list"}, APIGroups: `"", apps`, Resources: "pods, deployments/scale", Namespaces: "ci, build"},
				},
			},
			{
				Subjects:         []form.Subject{{Kind: "Group", Name: "system:authenticated"}},
				ResourceRules:    []form.ResourceRule{{Verbs: []string{"*"}, APIGroups: "*", Resources: "nodes", ClusterScope: true}},
				NonResourceRules: []form.NonResourceRule{{Verbs: []string{"get"}, URLs: "/healthz, /apis/*"}},
			},
		},
	}
}
