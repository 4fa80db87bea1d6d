package apf

import (
	"slices"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

func TestClassifyDefaults(t *testing.T) {
	fss, pls := testfixtures.DefaultAPF(t)
	levels := LevelsOf(pls)
	cases := []struct {
		name    string
		req     Request
		fs, pl  string
		method  string
		value   string
		used    bool
		whyPart string // a fragment of Result.Why
	}{
		{"system:masters is exempt", user("admin", "system:masters").res("list", "", "pods", "", "default"),
			"exempt", "exempt", "", "", false, "group system:masters"},
		{"masters on a non-resource URL", user("admin", "system:masters").url("get", "/metrics"),
			"exempt", "exempt", "", "", false, "nonResourceRule"},
		{"controller-manager leader election", user("system:kube-controller-manager").res("update", "coordination.k8s.io", "leases", "", "kube-system"),
			"system-leader-election", "leader-election", "ByUser", "system:kube-controller-manager", true, "user system:kube-controller-manager"},
		{"controller-manager lists pods cluster-wide", user("system:kube-controller-manager").res("list", "", "pods", "", ""),
			"kube-controller-manager", "workload-high", "ByNamespace", "", true, ""},
		{"leader election rule is namespaced only", user("system:kube-scheduler").res("get", "coordination.k8s.io", "leases", "", ""),
			"kube-scheduler", "workload-high", "ByNamespace", "", true, ""},
		{"scheduler loses the 800 tie by name", user("system:kube-scheduler").res("create", "", "pods", "binding", "default"),
			"kube-scheduler", "workload-high", "ByNamespace", "default", true, ""},
		{"kube-system service account", serviceAccount("kube-system", "replicaset-controller").res("list", "apps", "replicasets", "", "team-a"),
			"kube-system-service-accounts", "workload-high", "ByNamespace", "team-a", true, "serviceaccount kube-system/*"},
		{"kube-system service account renews its lease", serviceAccount("kube-system", "x").res("get", "coordination.k8s.io", "leases", "", "kube-system"),
			"system-leader-election", "leader-election", "ByUser", "system:serviceaccount:kube-system:x", true, ""},
		{"other service account", serviceAccount("default", "app").res("watch", "", "configmaps", "", "default"),
			"service-accounts", "workload-low", "ByUser", "system:serviceaccount:default:app", true, "group system:serviceaccounts"},
		{"service account named like kube-system", serviceAccount("kube-systemx", "app").res("get", "", "pods", "", "kube-systemx"),
			"service-accounts", "workload-low", "ByUser", "system:serviceaccount:kube-systemx:app", true, ""},
		{"node status", user("system:node:n1", "system:nodes").res("patch", "", "nodes", "status", ""),
			"system-node-high", "node-high", "ByUser", "system:node:n1", true, "resourceRules[0]"},
		{"node lease", user("system:node:n1", "system:nodes").res("update", "coordination.k8s.io", "leases", "", "kube-node-lease"),
			"system-node-high", "node-high", "ByUser", "system:node:n1", true, "resourceRules[1]"},
		{"node lists pods", user("system:node:n1", "system:nodes").res("list", "", "pods", "", ""),
			"system-nodes", "system", "ByUser", "system:node:n1", true, ""},
		{"probe", user("bob").url("get", "/healthz"), "probes", "exempt", "", "", false, "nonResourceRule"},
		{"probe sub-path is a prefix match", user("bob").url("get", "/readyz/etcd"), "probes", "exempt", "", "", false, ""},
		{"anonymous probe", user(UserAnonymous).url("get", "/livez"), "probes", "exempt", "", "", false, "group system:unauthenticated"},
		{"probe with another verb", user("bob").url("post", "/healthz"), "global-default", "global-default", "ByUser", "bob", true, ""},
		{"ordinary user", user("bob", "devs").res("get", "apps", "deployments", "", "team-a"),
			"global-default", "global-default", "ByUser", "bob", true, "group system:authenticated"},
		{"ordinary user, non-resource", user("bob").url("get", "/version"), "global-default", "global-default", "ByUser", "bob", true, ""},
		{"unauthenticated, no probe", user(UserAnonymous).url("get", "/version"), "global-default", "global-default", "ByUser", UserAnonymous, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Classify(fss, levels, c.req)
			if r.FlowSchema.Name != c.fs || r.PriorityLevelName != c.pl {
				t.Fatalf("got %s → %s, want %s → %s; trace:\n%s", r.FlowSchema.Name, r.PriorityLevelName, c.fs, c.pl, traceText(r))
			}
			if r.PriorityLevel == nil || r.PriorityLevel.Name != c.pl {
				t.Errorf("priority level object %v, want %s", r.PriorityLevel, c.pl)
			}
			d := r.Distinguisher
			if d.Method != c.method || d.Value != c.value || d.Used != c.used || !d.Known {
				t.Errorf("distinguisher %+v, want method %q value %q used %v", d, c.method, c.value, c.used)
			}
			if r.Fallback || r.Builtin {
				t.Errorf("fallback %v builtin %v", r.Fallback, r.Builtin)
			}
			if !strings.Contains(r.Why, c.whyPart) {
				t.Errorf("why %q lacks %q", r.Why, c.whyPart)
			}
			last := r.Trace[len(r.Trace)-1]
			if last.Outcome != Matched || last.FlowSchema != r.FlowSchema || last.Position != r.Position || r.Position != len(r.Trace) {
				t.Errorf("trace does not end with the match at position %d: %+v", r.Position, last)
			}
			for _, s := range r.Trace[:len(r.Trace)-1] {
				if s.Outcome != NoMatch || len(s.Rules) == 0 || s.Rules[0].Why == "" {
					t.Errorf("%s: outcome %s with rules %+v, want an explained miss", s.FlowSchema.Name, s.Outcome, s.Rules)
				}
			}
		})
	}
}

func traceText(r Result) string {
	var b strings.Builder
	for _, s := range r.Trace {
		b.WriteString(s.FlowSchema.Name + " " + string(s.Outcome))
		for _, rr := range s.Rules {
			b.WriteString(" | " + rr.Why)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestClassifyTraceReasons pins the wording of the reasons, one per way a rule can miss.
func TestClassifyTraceReasons(t *testing.T) {
	fss, pls := testfixtures.DefaultAPF(t)
	fss = append(fss,
		testfixtures.FlowSchema("ns-only", 150, "global-default", nil, flowcontrolv1.PolicyRulesWithSubjects{
			Subjects:      []flowcontrolv1.Subject{testfixtures.User("*")},
			ResourceRules: testfixtures.AnyResource([]string{"team-a", "team-b"}, false),
		}),
		testfixtures.FlowSchema("leases-and-urls", 160, "global-default", nil, flowcontrolv1.PolicyRulesWithSubjects{
			Subjects: []flowcontrolv1.Subject{groupSubject("*")},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{
				{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*"}, ClusterScope: true},
				{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"pods/status"}, ClusterScope: true},
				{Verbs: []string{"*"}, APIGroups: []string{"apps"}, Resources: []string{"*"}, ClusterScope: true},
			},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}}},
		}),
	)
	levels := LevelsOf(pls)
	reasons := func(r Result, name string) string {
		for _, s := range r.Trace {
			if s.FlowSchema.Name == name {
				var out []string
				for _, rr := range s.Rules {
					out = append(out, rr.Why)
				}
				return strings.Join(out, " || ")
			}
		}
		t.Fatalf("%s not in the trace:\n%s", name, traceText(r))
		return ""
	}
	bobPods := user("bob").res("list", "", "pods", "", "")
	r := Classify(fss, levels, bobPods)
	for name, want := range map[string]string{
		"exempt":                 "no subject matches: it names group system:masters",
		"probes":                 "subject group system:authenticated matches, but the rule has no resourceRules and this is a resource request",
		"system-leader-election": "no subject matches: it names user system:kube-controller-manager, user system:kube-scheduler, serviceaccount kube-system/*",
		"ns-only":                `subject user * matches, but the request is cluster-scoped and clusterScope is false`,
		"leases-and-urls":        `subject group * matches, but resourceRules[0]: verb "list" is not in verbs [get]; resourceRules[1]: resource "pods" is not in resources [pods/status]; resourceRules[2]: API group "" (core) is not in apiGroups [apps]`,
	} {
		if got := reasons(r, name); got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	r = Classify(fss, levels, user("bob").res("get", "", "pods", "", "team-c"))
	if got, want := reasons(r, "ns-only"), `subject user * matches, but namespace "team-c" is not in namespaces [team-a, team-b]`; got != want {
		t.Errorf("ns-only: got %s, want %s", got, want)
	}
	if r.FlowSchema.Name != "global-default" {
		t.Errorf("get pods in team-c: %s (%s)", r.FlowSchema.Name, r.Why)
	}
	r = Classify(fss, levels, user("bob").res("get", "", "nodes", "", ""))
	if r.FlowSchema.Name != "leases-and-urls" || r.Why != "subject group * and resourceRules[0] match" {
		t.Errorf("get a node: %s (%s)", r.FlowSchema.Name, r.Why)
	}
	r = Classify(fss, levels, user("bob").url("get", "/version"))
	if got, want := reasons(r, "leases-and-urls"), `subject group * matches, but path "/version" is not covered by nonResourceURLs [/metrics]`; got != want {
		t.Errorf("non-resource: got %s, want %s", got, want)
	}
	if got, want := reasons(r, "ns-only"), `subject user * matches, but the rule has no nonResourceRules and this is a non-resource request`; got != want {
		t.Errorf("non-resource on a resource-only rule: got %s, want %s", got, want)
	}
	r = Classify(fss, levels, user("bob").url("post", "/metrics"))
	if got, want := reasons(r, "leases-and-urls"), `subject group * matches, but verb "post" is not in verbs [get]`; got != want {
		t.Errorf("non-resource verb: got %s, want %s", got, want)
	}
	r = Classify(fss, levels, user("bob").res("patch", "", "pods", "status", "team-a"))
	if r.FlowSchema.Name != "ns-only" {
		t.Errorf("patch pods/status in team-a: %s", r.FlowSchema.Name)
	}
}

func TestClassifyTiesDanglingAndBuiltins(t *testing.T) {
	fss, pls := testfixtures.DefaultAPF(t)
	levels := LevelsOf(pls)
	bobRule := flowcontrolv1.PolicyRulesWithSubjects{
		Subjects:      []flowcontrolv1.Subject{testfixtures.User("bob")},
		ResourceRules: testfixtures.AnyResource([]string{"*"}, true),
	}
	bob := user("bob").res("get", "", "pods", "", "default")

	t.Run("tie goes to the lower name", func(t *testing.T) {
		all := append(slices.Clone(fss), testfixtures.FlowSchema("bob-b", 300, "workload-low", nil, bobRule), testfixtures.FlowSchema("bob-a", 300, "system", nil, bobRule))
		r := Classify(all, levels, bob)
		if r.FlowSchema.Name != "bob-a" || r.PriorityLevelName != "system" {
			t.Fatalf("got %s, want bob-a", r.FlowSchema.Name)
		}
	})
	t.Run("dangling FlowSchema is skipped", func(t *testing.T) {
		all := append(slices.Clone(fss), testfixtures.FlowSchema("bob-ghost", 50, "no-such-level", nil, bobRule))
		r := Classify(all, levels, bob)
		if r.FlowSchema.Name != "global-default" {
			t.Fatalf("got %s, want global-default", r.FlowSchema.Name)
		}
		var skipped []string
		for _, s := range r.Trace {
			if s.Outcome == Skipped {
				skipped = append(skipped, s.FlowSchema.Name)
				if !s.Dangling || len(s.Rules) != 0 {
					t.Errorf("skipped step %+v", s)
				}
			}
		}
		if !slices.Equal(skipped, []string{"bob-ghost"}) {
			t.Errorf("skipped %v", skipped)
		}
	})
	t.Run("without priority levels the Dangling condition decides", func(t *testing.T) {
		ghost := testfixtures.FlowSchema("bob-ghost", 50, "no-such-level", nil, bobRule)
		noCondition := testfixtures.FlowSchema("bob-unknown", 60, "also-missing", nil, bobRule)
		ghost.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionTrue}}
		r := Classify(append(slices.Clone(fss), ghost, noCondition), nil, bob)
		if r.FlowSchema.Name != "bob-unknown" || r.PriorityLevel != nil || r.PriorityLevelName != "also-missing" || r.Distinguisher.Known {
			t.Fatalf("got %s pl %v %q known %v, want bob-unknown with no level object", r.FlowSchema.Name, r.PriorityLevel, r.PriorityLevelName, r.Distinguisher.Known)
		}
	})
	t.Run("missing exempt and catch-all are supplied built in", func(t *testing.T) {
		some := without(without(fss, "exempt"), "catch-all")
		r := Classify(some, levels, user("admin", GroupMasters).res("delete", "", "nodes", "", ""))
		if r.FlowSchema.Name != "exempt" || !r.Builtin || r.Position != 1 || r.PriorityLevelName != "exempt" {
			t.Fatalf("got %s builtin %v position %d", r.FlowSchema.Name, r.Builtin, r.Position)
		}
		seq := Sequence(some, levels)
		if last := seq[len(seq)-1]; last.FlowSchema.Name != "catch-all" || !last.Builtin || last.Position != len(seq) {
			t.Errorf("last entry %+v, want built-in catch-all", last)
		}
	})
	t.Run("mandatory priority levels are imagined when missing", func(t *testing.T) {
		var limited []*flowcontrolv1.PriorityLevelConfiguration
		for _, pl := range pls {
			if pl.Name != "exempt" && pl.Name != "catch-all" {
				limited = append(limited, pl)
			}
		}
		r := Classify(fss, LevelsOf(limited), user("bob").url("get", "/healthz"))
		if r.FlowSchema.Name != "probes" || r.PriorityLevel == nil || r.PriorityLevel.Spec.Type != flowcontrolv1.PriorityLevelEnablementExempt {
			t.Fatalf("got %s with level %v", r.FlowSchema.Name, r.PriorityLevel)
		}
	})
	t.Run("no auth group falls back to catch-all", func(t *testing.T) {
		r := Classify(fss, levels, Request{User: "nobody"}.url("get", "/version"))
		if r.FlowSchema.Name != "catch-all" || !r.Fallback || r.Rule != -1 {
			t.Fatalf("got %s fallback %v", r.FlowSchema.Name, r.Fallback)
		}
		// catch-all rejects instead of queuing: no distinguisher is computed.
		if d := r.Distinguisher; d.Method != "ByUser" || d.Value != "nobody" || d.Used || !d.Known {
			t.Errorf("distinguisher %+v", d)
		}
		if n := len(r.Trace); n != len(fss) || r.Trace[n-1].Outcome != NoMatch {
			t.Errorf("trace has %d steps, want every FlowSchema evaluated", n)
		}
	})
	t.Run("catch-all matches an authenticated request that global-default would", func(t *testing.T) {
		r := Classify(without(fss, "global-default"), levels, bob)
		if r.FlowSchema.Name != "catch-all" || r.Fallback || r.Distinguisher.Used {
			t.Fatalf("got %s fallback %v used %v", r.FlowSchema.Name, r.Fallback, r.Distinguisher.Used)
		}
	})
}
