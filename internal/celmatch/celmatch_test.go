package celmatch

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/utils/ptr"
)

type allowVerb string

func (v allowVerb) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetVerb() == string(v) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func TestEvaluate(t *testing.T) {
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "labels": map[string]any{"team": "blue"}},
		"data": map[string]any{"k": "v"}}
	req := Request{Operation: "CREATE", Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "ns",
		Object: cm, User: User{Name: "alice", Groups: []string{"dev"}}}
	mc := func(exprs ...string) []admissionregistrationv1.MatchCondition {
		var out []admissionregistrationv1.MatchCondition
		for i, e := range exprs {
			out = append(out, admissionregistrationv1.MatchCondition{Name: string(rune('a' + i)), Expression: e})
		}
		return out
	}
	fail, ignore := ptr.To(admissionregistrationv1.Fail), ptr.To(admissionregistrationv1.Ignore)
	for _, tc := range []struct {
		name    string
		conds   []admissionregistrationv1.MatchCondition
		fp      *admissionregistrationv1.FailurePolicyType
		want    Decision
		results string
	}{
		{"all true", mc(`object.metadata.labels.team == "blue"`, `request.userInfo.username == "alice"`, `oldObject == null`), fail, Call, "true true true"},
		{"one false skips", mc(`true`, `"ops" in request.userInfo.groups`), fail, Skip, "true false"},
		{"false wins over an error", mc(`object.nope == 1`, `false`), fail, Skip, "error false"},
		{"error with Fail rejects", mc(`object.nope == 1`, `true`), fail, Reject, "error true"},
		{"error with Ignore skips", mc(`object.nope == 1`), ignore, Skip, "error"},
		{"no failurePolicy is Fail", mc(`object.nope == 1`), nil, Reject, "error"},
		{"compile error", mc(`object.`), ignore, Skip, "error"},
		{"authorizer asked", mc(`authorizer.group('').resource('pods').namespace('ns').check('create').allowed()`), fail, Call, "true"},
		{"authorizer denies", mc(`authorizer.group('').resource('pods').namespace('ns').check('delete').allowed()`), fail, Skip, "false"},
		{"request resource", mc(`request.resource.resource == "configmaps" && request.namespace == "ns" && request.name == "a"`), fail, Call, "true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := Evaluate(context.Background(), tc.conds, tc.fp, req, allowVerb("create"))
			var got []string
			for _, c := range out.Conditions {
				got = append(got, string(c.Result))
				if c.Result == Error && c.Error == "" {
					t.Errorf("condition %s: error without text", c.Name)
				}
			}
			if out.Decision != tc.want || strings.Join(got, " ") != tc.results {
				t.Errorf("got %s (%s), want %s (%s): %+v", out.Decision, strings.Join(got, " "), tc.want, tc.results, out)
			}
			if out.Decision == Reject && out.Error == "" {
				t.Error("a rejection without the error text")
			}
		})
	}
}
