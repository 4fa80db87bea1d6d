package apf

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

func TestMatchSubject(t *testing.T) {
	bob := user("bob", "devs")
	sa := serviceAccount("kube-system", "deployment-controller")
	cases := []struct {
		name string
		s    flowcontrolv1.Subject
		req  Request
		want bool
	}{
		{"user by name", testfixtures.User("bob"), bob, true},
		{"other user", testfixtures.User("alice"), bob, false},
		{"any user", testfixtures.User("*"), bob, true},
		{"group", groupSubject("devs"), bob, true},
		{"implicit authenticated group", groupSubject(GroupAuthenticated), bob, true},
		{"other group", groupSubject("ops"), bob, false},
		{"any group, even with no groups", groupSubject("*"), Request{User: "x"}, true},
		{"service account by name", testfixtures.ServiceAccount("kube-system", "deployment-controller"), sa, true},
		{"service account, other name", testfixtures.ServiceAccount("kube-system", "job-controller"), sa, false},
		{"service account, any name in the namespace", testfixtures.ServiceAccount("kube-system", "*"), sa, true},
		{"namespace is matched whole, not as a prefix", testfixtures.ServiceAccount("kube", "*"), sa, false},
		{"service account subject against a plain user", testfixtures.ServiceAccount("kube-system", "*"), user("system:kube-system:x"), false},
		{"service account user matched as a user name", testfixtures.User("system:serviceaccount:kube-system:deployment-controller"), sa, true},
		{"service account groups", groupSubject("system:serviceaccounts:kube-system"), sa, true},
		{"kind without its member", flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser}, bob, false},
		{"member without its kind", flowcontrolv1.Subject{User: &flowcontrolv1.UserSubject{Name: "bob"}}, bob, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := matchSubject(c.s, c.req); got != c.want {
				t.Errorf("matchSubject(%s, %s %v) = %v", SubjectText(c.s), c.req.User, c.req.Groups, got)
			}
		})
	}
}

func TestMatchResourceRule(t *testing.T) {
	rule := flowcontrolv1.ResourcePolicyRule{
		Verbs: []string{"get", "list"}, APIGroups: []string{"", "apps"},
		Resources: []string{"pods", "pods/status", "deployments"}, Namespaces: []string{"team-a"},
	}
	cluster := rule
	cluster.ClusterScope, cluster.Namespaces = true, nil
	every := rule
	every.Namespaces = []string{"*"}
	r := Request{IsResourceRequest: true}
	cases := []struct {
		name string
		rule flowcontrolv1.ResourcePolicyRule
		req  Request
		want string // "" for a match
	}{
		{"match", rule, r.res("get", "", "pods", "", "team-a"), ""},
		{"subresource listed", rule, r.res("get", "", "pods", "status", "team-a"), ""},
		{"subresource not listed", rule, r.res("get", "", "pods", "log", "team-a"), `resource "pods/log" is not in resources [pods, pods/status, deployments]`},
		{"group and resource are matched independently", rule, r.res("list", "apps", "pods", "", "team-a"), ""},
		{"verb", rule, r.res("watch", "", "pods", "", "team-a"), `verb "watch" is not in verbs [get, list]`},
		{"group", rule, r.res("get", "batch", "pods", "", "team-a"), `API group "batch" is not in apiGroups ["", apps]`},
		{"namespace", rule, r.res("get", "", "pods", "", "team-b"), `namespace "team-b" is not in namespaces [team-a]`},
		{"cluster-scoped request on a namespaced rule", rule, r.res("list", "", "pods", "", ""), "the request is cluster-scoped and clusterScope is false"},
		{"cluster scope", cluster, r.res("list", "", "pods", "", ""), ""},
		{"clusterScope alone does not cover namespaces", cluster, r.res("list", "", "pods", "", "team-a"), `namespace "team-a" is not in namespaces (none)`},
		{"every namespace", every, r.res("list", "", "pods", "", "anything"), ""},
		{"every namespace is not cluster scope", every, r.res("list", "", "pods", "", ""), "the request is cluster-scoped and clusterScope is false"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			why, ok := matchResourceRule(c.rule, c.req)
			if ok != (c.want == "") || why != c.want {
				t.Errorf("got (%q, %v), want %q", why, ok, c.want)
			}
		})
	}
}

func TestMatchURL(t *testing.T) {
	cases := []struct {
		urls []string
		path string
		want bool
	}{
		{[]string{"*"}, "/anything", true},
		{[]string{"/healthz"}, "/healthz", true},
		{[]string{"/healthz"}, "/healthz/etcd", true}, // every entry is also a prefix
		{[]string{"/healthz"}, "/healthzz", false},
		{[]string{"/healthz/*"}, "/healthz/etcd", true},
		{[]string{"/healthz/*"}, "/healthz", false},
		{[]string{"/apis/*"}, "/apis", false},
		{[]string{"/apis/*"}, "/apis/apps/v1", true},
		{[]string{"/version", "/metrics"}, "/metrics", true},
		{nil, "/version", false},
	}
	for _, c := range cases {
		if got := matchURL(c.urls, c.path); got != c.want {
			t.Errorf("matchURL(%v, %q) = %v, want %v", c.urls, c.path, got, c.want)
		}
	}
}

func TestContainsStringWildcardOnlyAlone(t *testing.T) {
	cases := []struct {
		values []string
		x      string
		want   bool
	}{
		{[]string{"*"}, "get", true},
		{[]string{"get", "*"}, "list", false}, // invalid per validation; the apiserver does not treat "*" as a wildcard here
		{[]string{"get", "*"}, "*", true},
		{[]string{"get"}, "get", true},
		{nil, "get", false},
	}
	for _, c := range cases {
		if got := containsString(c.x, c.values, "*"); got != c.want {
			t.Errorf("containsString(%q, %v) = %v, want %v", c.x, c.values, got, c.want)
		}
	}
}
