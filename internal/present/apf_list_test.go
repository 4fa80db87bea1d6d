package present

import (
	"slices"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func ghostSchema() *flowcontrolv1.FlowSchema {
	fs := testfixtures.FlowSchema("ghost-users", 9000, "no-such-level", nil,
		testfixtures.Rule(testfixtures.Subjects(testfixtures.User("ghost")), testfixtures.AnyResource([]string{"*"}, false)))
	fs.Status = flowcontrolv1.FlowSchemaStatus{Conditions: []flowcontrolv1.FlowSchemaCondition{{
		Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionTrue,
		Message: `This FlowSchema references the PriorityLevelConfiguration object named "no-such-level" but there is no such object`,
	}}}
	return fs
}

func rowNamesOf(p model.FlowSchemaListPage) []string {
	var out []string
	for _, r := range p.Rows {
		out = append(out, r.Name)
	}
	return out
}

func TestFlowSchemaOverviewOrderAndRows(t *testing.T) {
	fss, pls := testfixtures.DefaultAPF(t)
	fss = append(fss, ghostSchema())
	p := FlowSchemaOverview(fss, apf.LevelsOf(pls), ListQuery{}, time.Now())

	want := []string{"exempt", "probes", "system-leader-election", "system-node-high", "system-nodes",
		"kube-controller-manager", "kube-scheduler", "kube-system-service-accounts",
		"ghost-users", "service-accounts", "global-default", "catch-all"}
	if got := rowNamesOf(p); !slices.Equal(got, want) {
		t.Fatalf("order\n got %v\nwant %v", got, want)
	}
	var keys []string
	for _, c := range p.List.Columns {
		keys = append(keys, c.Key)
	}
	if !slices.Equal(keys, []string{"order", "name", "precedence", "prioritylevel", "distinguisher", "rules"}) {
		t.Errorf("columns %v", keys)
	}
	if p.List.Columns[0].Sorted != "asc" || p.List.Sort != "order" || p.List.Total != 12 || p.List.Shown != 12 {
		t.Errorf("sorted %q by %q, %d of %d", p.List.Columns[0].Sorted, p.List.Sort, p.List.Shown, p.List.Total)
	}
	if p.ClassifyHref != urls.Classify || len(p.Notes) != 0 || p.List.Rows != nil {
		t.Errorf("classify %q notes %v", p.ClassifyHref, p.Notes)
	}

	rows := map[string]model.FlowSchemaRow{}
	for _, r := range p.Rows {
		rows[r.Name] = r
	}
	leader := rows["system-leader-election"]
	if leader.Position != "3" || leader.Precedence != "100" || leader.PriorityLevelHref != "/prioritylevels/leader-election" ||
		leader.Distinguisher != "ByUser" || leader.Href != "/flowschemas/system-leader-election" || leader.Skipped {
		t.Errorf("system-leader-election row %+v", leader)
	}
	if want := "user system:kube-controller-manager, user system:kube-scheduler, serviceaccount kube-system/* → get,create,update on leases (coordination.k8s.io) in any namespace"; leader.Summary != want {
		t.Errorf("summary\n got %s\nwant %s", leader.Summary, want)
	}
	if b := leader.NameBadges; len(b) != 1 || b[0].Text != "Auto-update" || b[0].Tone != model.ToneWarning || !strings.Contains(b[0].Hint, `unless the annotation is set to "false"`) {
		t.Errorf("leader badges %+v", b)
	}
	if b := rows["exempt"].NameBadges; len(b) != 1 || b[0].Text != "Mandatory" {
		t.Errorf("exempt badges %+v", b)
	}
	ghost := rows["ghost-users"]
	if !ghost.Skipped || ghost.PriorityLevelHref != "" || ghost.Position != "9" || len(ghost.PriorityLevelBadges) != 1 ||
		ghost.PriorityLevelBadges[0].Text != "Missing" || !strings.Contains(ghost.PriorityLevelBadges[0].Hint, "Dangling condition: This FlowSchema references") {
		t.Errorf("ghost row %+v", ghost)
	}
	if b := ghost.NameBadges; len(b) != 1 || b[0].Text != "Skipped" {
		t.Errorf("ghost badges %+v", b)
	}
	if ghost.Distinguisher != "ByNamespace" && ghost.Distinguisher != "<none>" {
		t.Errorf("ghost distinguisher %q", ghost.Distinguisher)
	}
}

func TestFlowSchemaOverviewFilterSortAndBuiltins(t *testing.T) {
	fss, pls := testfixtures.DefaultAPF(t)
	levels := apf.LevelsOf(pls)

	p := FlowSchemaOverview(fss, levels, ListQuery{Filter: "leases"}, time.Now())
	if got := rowNamesOf(p); !slices.Equal(got, []string{"system-leader-election", "system-node-high"}) || p.List.Shown != 2 || p.List.Total != 11 {
		t.Errorf("filter on the summary text: %v (%d of %d)", got, p.List.Shown, p.List.Total)
	}
	p = FlowSchemaOverview(fss, levels, ListQuery{Filter: "mandatory"}, time.Now())
	if got := rowNamesOf(p); !slices.Equal(got, []string{"exempt", "catch-all"}) {
		t.Errorf("filter on a badge: %v", got)
	}
	p = FlowSchemaOverview(fss, levels, ListQuery{Sort: "name"}, time.Now())
	names := rowNamesOf(p)
	if !slices.IsSorted(names) || p.List.Columns[1].Sorted != "asc" || p.List.Columns[0].Sorted != "" {
		t.Errorf("sort by name: %v", names)
	}
	p = FlowSchemaOverview(fss, levels, ListQuery{Sort: "order", Desc: true}, time.Now())
	if names := rowNamesOf(p); names[0] != "catch-all" || names[len(names)-1] != "exempt" {
		t.Errorf("descending order: %v", names)
	}

	var some []*flowcontrolv1.FlowSchema
	for _, fs := range fss {
		if fs.Name != "exempt" {
			some = append(some, fs)
		}
	}
	p = FlowSchemaOverview(some, levels, ListQuery{}, time.Now())
	if len(p.Notes) != 1 || p.Notes[0].TestID != "banner-builtin-exempt" || p.Rows[0].Name != "probes" || p.Rows[0].Position != "2" {
		t.Errorf("missing exempt: notes %+v, first row %+v", p.Notes, p.Rows[0])
	}
	// Without priority levels the Dangling condition decides, and existing levels are still linked.
	p = FlowSchemaOverview(append(slices.Clone(fss), ghostSchema()), nil, ListQuery{}, time.Now())
	for _, r := range p.Rows {
		if (r.Name == "ghost-users") != r.Skipped || (r.PriorityLevelHref == "") != r.Skipped {
			t.Errorf("levels unknown: row %s skipped %v href %q", r.Name, r.Skipped, r.PriorityLevelHref)
		}
	}
}

func TestMaintenanceBadges(t *testing.T) {
	cases := []struct {
		name       string
		annotation *string
		generation int64
		want       string // badge text, "" for none
	}{
		{"exempt", ptrTo("true"), 1, "Mandatory"},
		{"catch-all", ptrTo("false"), 3, "Mandatory"}, // mandatory objects are restored whatever the annotation says
		{"catch-all", nil, 5, "Mandatory"},
		{"global-default", ptrTo("true"), 2, "Auto-update"},
		{"global-default", ptrTo("false"), 2, "Auto-update off"},
		{"custom", nil, 1, ""},
		{"custom", ptrTo("maybe"), 1, "Auto-update"},
		{"custom", ptrTo("maybe"), 2, ""},
	}
	for _, c := range cases {
		fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: c.name, Generation: c.generation}}
		if c.annotation != nil {
			fs.Annotations = map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: *c.annotation}
		}
		got := ""
		if b := MaintenanceBadges(fs); len(b) == 1 {
			got = b[0].Text
		}
		if got != c.want {
			t.Errorf("%s annotated %v generation %d: %q, want %q", c.name, c.annotation, c.generation, got, c.want)
		}
		_, warn := MaintenanceWarning(fs.Name, fs.Annotations, fs.Generation)
		if warn != (c.want == "Mandatory" || c.want == "Auto-update") {
			t.Errorf("%s: warning %v", c.name, warn)
		}
	}
}

func ptrTo(s string) *string { return &s }

func TestRulesSummary(t *testing.T) {
	fss, _ := testfixtures.DefaultAPF(t)
	got := map[string]string{}
	for _, fs := range fss {
		got[fs.Name] = RulesSummary(fs.Spec.Rules)
	}
	for name, want := range map[string]string{
		"exempt":           "group system:masters → * on * (any group) everywhere; * on URLs *",
		"probes":           "group system:unauthenticated, group system:authenticated → get on URLs /healthz,/readyz,/livez",
		"system-node-high": "group system:nodes → * on nodes,nodes/status (core) everywhere; * on leases (coordination.k8s.io) in any namespace",
	} {
		if got[name] != want {
			t.Errorf("%s\n got %s\nwant %s", name, got[name], want)
		}
	}
	two := []flowcontrolv1.PolicyRulesWithSubjects{
		{Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "a"}}},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Namespaces: []string{"x", "y"}}}},
		{ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"nodes"}, ClusterScope: true}}},
	}
	if got, want := RulesSummary(two), "user a → get on deployments (apps) in namespaces x,y | no subjects → list on nodes (core) cluster-scoped only"; got != want {
		t.Errorf("two rules\n got %s\nwant %s", got, want)
	}
	if got := RulesSummary(nil); got != "no rules: matches nothing" {
		t.Errorf("no rules: %s", got)
	}
}
