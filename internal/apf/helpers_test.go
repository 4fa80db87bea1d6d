package apf

import (
	"os"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// defaults loads the FlowSchemas and priority levels a v1.36.3 apiserver
// creates, as read from a real one (testdata/).
func defaults(t *testing.T) ([]*flowcontrolv1.FlowSchema, []*flowcontrolv1.PriorityLevelConfiguration) {
	t.Helper()
	var fsl flowcontrolv1.FlowSchemaList
	var pll flowcontrolv1.PriorityLevelConfigurationList
	for path, into := range map[string]any{
		"testdata/default-flowschemas.yaml":    &fsl,
		"testdata/default-prioritylevels.yaml": &pll,
	} {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(raw, into); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	var fss []*flowcontrolv1.FlowSchema
	for i := range fsl.Items {
		fss = append(fss, &fsl.Items[i])
	}
	var pls []*flowcontrolv1.PriorityLevelConfiguration
	for i := range pll.Items {
		pls = append(pls, &pll.Items[i])
	}
	if len(fss) != 11 || len(pls) != 8 {
		t.Fatalf("testdata holds %d FlowSchemas and %d priority levels, want 11 and 8", len(fss), len(pls))
	}
	return fss, pls
}

func without(fss []*flowcontrolv1.FlowSchema, name string) []*flowcontrolv1.FlowSchema {
	var out []*flowcontrolv1.FlowSchema
	for _, fs := range fss {
		if fs.Name != name {
			out = append(out, fs)
		}
	}
	return out
}

// schema builds a FlowSchema with one rule.
func schema(name string, precedence int32, pl string, rule flowcontrolv1.PolicyRulesWithSubjects) *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{
			MatchingPrecedence:         precedence,
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: pl},
			Rules:                      []flowcontrolv1.PolicyRulesWithSubjects{rule},
		},
	}
}

func userSubject(name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: name}}
}

func saSubject(ns, name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: ns, Name: name}}
}

func anyResource(namespaces []string, cluster bool) []flowcontrolv1.ResourcePolicyRule {
	return []flowcontrolv1.ResourcePolicyRule{{
		Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
		Namespaces: namespaces, ClusterScope: cluster,
	}}
}

// user is an authenticated request's identity.
func user(name string, groups ...string) Request {
	return Request{User: name, Groups: WithAuthGroup(name, groups)}
}

func serviceAccount(ns, name string) Request {
	u, g := ServiceAccountUser(ns, name)
	return Request{User: u, Groups: WithAuthGroup(u, g)}
}

func (r Request) res(verb, group, resource, sub, ns string) Request {
	r.IsResourceRequest, r.Verb, r.APIGroup, r.Resource, r.Subresource, r.Namespace = true, verb, group, resource, sub, ns
	return r
}

func (r Request) url(verb, path string) Request {
	r.Verb, r.Path = verb, path
	return r
}
