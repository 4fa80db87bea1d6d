package apf

import (
	"slices"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

func TestSequenceDefaults(t *testing.T) {
	fss, pls := testfixtures.DefaultAPF(t)
	var got []string
	for _, e := range Sequence(fss, LevelsOf(pls)) {
		got = append(got, e.FlowSchema.Name)
		if e.Dangling || e.Builtin {
			t.Errorf("%s: dangling %v builtin %v", e.FlowSchema.Name, e.Dangling, e.Builtin)
		}
	}
	// The order `kubectl get flowschemas` shows on a fresh v1.36 cluster.
	want := []string{"exempt", "probes", "system-leader-election", "system-node-high", "system-nodes",
		"kube-controller-manager", "kube-scheduler", "kube-system-service-accounts",
		"service-accounts", "global-default", "catch-all"}
	if !slices.Equal(got, want) {
		t.Errorf("order\n got %v\nwant %v", got, want)
	}
}

func TestSequenceTiesAndPositions(t *testing.T) {
	rule := flowcontrolv1.PolicyRulesWithSubjects{}
	in := []*flowcontrolv1.FlowSchema{
		testfixtures.FlowSchema("b", 500, "exempt", nil, rule),
		testfixtures.FlowSchema("Z", 500, "exempt", nil, rule), // byte order: upper case sorts before lower case
		testfixtures.FlowSchema("a", 500, "missing", nil, rule),
		testfixtures.FlowSchema("first", 2, "exempt", nil, rule),
		testfixtures.FlowSchema("a-10", 10, "exempt", nil, rule),
		testfixtures.FlowSchema("a-9", 9, "exempt", nil, rule), // numeric precedence, not text
	}
	seq := Sequence(in, Levels{})
	var names []string
	for i, e := range seq {
		names = append(names, e.FlowSchema.Name)
		if e.Position != i+1 {
			t.Errorf("%s at index %d has position %d", e.FlowSchema.Name, i, e.Position)
		}
		if e.Dangling != (e.FlowSchema.Name == "a") {
			t.Errorf("%s dangling = %v", e.FlowSchema.Name, e.Dangling)
		}
	}
	want := []string{"exempt", "first", "a-9", "a-10", "Z", "a", "b", "catch-all"}
	if !slices.Equal(names, want) {
		t.Errorf("got %v, want %v", names, want)
	}
	if !seq[0].Builtin || !seq[len(seq)-1].Builtin {
		t.Error("exempt and catch-all should be the built-in copies")
	}
	if in[0].Name != "b" {
		t.Error("Sequence reordered its input")
	}
}

func TestLess(t *testing.T) {
	a, b := testfixtures.FlowSchema("kube-controller-manager", 800, "", nil, flowcontrolv1.PolicyRulesWithSubjects{}), testfixtures.FlowSchema("kube-scheduler", 800, "", nil, flowcontrolv1.PolicyRulesWithSubjects{})
	if !Less(a, b) || Less(b, a) {
		t.Error("equal precedence: the lower name goes first")
	}
	c := testfixtures.FlowSchema("aaa", 900, "", nil, flowcontrolv1.PolicyRulesWithSubjects{})
	if !Less(b, c) || Less(c, a) {
		t.Error("lower precedence goes first whatever the name")
	}
}

func TestIdentity(t *testing.T) {
	u, g := ServiceAccountUser("team-a", "builder")
	if u != "system:serviceaccount:team-a:builder" || !slices.Equal(g, []string{"system:serviceaccounts", "system:serviceaccounts:team-a"}) {
		t.Errorf("ServiceAccountUser = %q %v", u, g)
	}
	if ns, name, ok := SplitServiceAccount(u); !ok || ns != "team-a" || name != "builder" {
		t.Errorf("SplitServiceAccount(%q) = %q %q %v", u, ns, name, ok)
	}
	for _, bad := range []string{"bob", "system:serviceaccount:team-a", "system:serviceaccount::x", "system:serviceaccount:a:b:c"} {
		if _, _, ok := SplitServiceAccount(bad); ok {
			t.Errorf("SplitServiceAccount(%q) ok", bad)
		}
	}
	cases := []struct {
		user   string
		groups []string
		want   []string
	}{
		{"bob", nil, []string{GroupAuthenticated}},
		{"bob", []string{"devs"}, []string{"devs", GroupAuthenticated}},
		{"bob", []string{GroupAuthenticated, "devs"}, []string{GroupAuthenticated, "devs"}},
		{"bob", []string{GroupUnauthenticated}, []string{GroupUnauthenticated}},
		{UserAnonymous, nil, []string{GroupUnauthenticated}},
		{UserAnonymous, []string{GroupUnauthenticated}, []string{GroupUnauthenticated}},
	}
	for _, c := range cases {
		if got := WithAuthGroup(c.user, c.groups); !slices.Equal(got, c.want) {
			t.Errorf("WithAuthGroup(%q, %v) = %v, want %v", c.user, c.groups, got, c.want)
		}
	}
}
