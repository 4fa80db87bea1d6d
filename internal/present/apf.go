package present

import (
	"strconv"
	"strings"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

var flowSchemaColumns = []column{
	{"name", "Name", true},
	{"prioritylevel", "Priority level", true},
	{"precedence", "Matching precedence", true},
	{"distinguisher", "Distinguisher", true},
	{"age", "Age", true},
	{"missingpl", "Missing PL", true},
}

// missingPL mirrors kubectl's MISSINGPL column: the apiserver sets the Dangling
// condition when the referenced PriorityLevelConfiguration does not exist.
func missingPL(fs *flowcontrolv1.FlowSchema) string {
	for _, c := range fs.Status.Conditions {
		if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
			return string(c.Status)
		}
	}
	return "?"
}

func distinguisher(fs *flowcontrolv1.FlowSchema) string {
	if fs.Spec.DistinguisherMethod == nil {
		return "<none>"
	}
	return string(fs.Spec.DistinguisherMethod.Type)
}

// FlowSchemaList lays out the FlowSchema list page.
func FlowSchemaList(items []*flowcontrolv1.FlowSchema, q ListQuery, now time.Time) model.ListPage {
	const kind = "flowschemas"
	action := urls.List(kind)
	rows := make([]row, 0, len(items))
	for _, fs := range items {
		ageC, ageKey := ageCell(fs.CreationTimestamp, now)
		missing := missingPL(fs)
		missingCell := model.Cell{Text: missing}
		if missing == "True" {
			missingCell = model.Cell{Badges: []model.Badge{{Text: "Missing", Tone: model.ToneError, Hint: "the priority level does not exist: requests fall through to catch-all"}}}
		}
		rows = append(rows, newRow(kind, action, fs.Name, []model.Cell{
			{Text: fs.Spec.PriorityLevelConfiguration.Name, Mono: true},
			{Text: strconv.Itoa(int(fs.Spec.MatchingPrecedence))},
			{Text: distinguisher(fs)},
			ageC,
			missingCell,
		}, []string{fs.Spec.PriorityLevelConfiguration.Name, padInt(int64(fs.Spec.MatchingPrecedence)), distinguisher(fs), ageKey, missing}))
	}
	return table(kind, "FlowSchemas", action, flowSchemaColumns, rows, q)
}

// FlowSchemaDetail lays out one FlowSchema.
func FlowSchemaDetail(fs *flowcontrolv1.FlowSchema, now time.Time) model.DetailPage {
	ageText, ageTitle, _ := age(fs.CreationTimestamp, now)
	status := model.Badge{Text: "Active", Tone: model.ToneOK}
	if missingPL(fs) == "True" {
		status = model.Badge{Text: "Dangling", Tone: model.ToneError, Hint: "its priority level does not exist"}
	}
	p := model.DetailPage{
		KindID: "flowschemas", KindTitle: "FlowSchemas", Name: fs.Name, Status: status,
		Fields: []model.Field{
			{Label: "Priority level", Value: fs.Spec.PriorityLevelConfiguration.Name, Mono: true},
			{Label: "Matching precedence", Value: strconv.Itoa(int(fs.Spec.MatchingPrecedence))},
			{Label: "Distinguisher", Value: distinguisher(fs)},
			{Label: "Auto-update spec", Value: orDash(fs.Annotations[flowcontrolv1.AutoUpdateAnnotationKey]),
				Hint: "\"true\": the apiserver maintains this object and overwrites edits"},
			{Label: "Age", Value: ageText, Hint: ageTitle},
		},
	}
	rules := model.Section{Title: "Rules", TestID: "rules", Columns: []string{"Subjects", "Resource rules", "Non-resource rules"}}
	for _, r := range fs.Spec.Rules {
		rules.Rows = append(rules.Rows, []string{subjects(r.Subjects), resourceRules(r.ResourceRules), nonResourceRules(r.NonResourceRules)})
	}
	p.Sections = append(p.Sections, rules)
	if b, ok := MaintenanceWarning(fs.Name, fs.Annotations, fs.Generation); ok {
		p.Problems = append(p.Problems, b)
	}
	if missingPL(fs) == "True" {
		p.Problems = append(p.Problems, model.Banner{Tone: model.ToneError, Title: "Priority level missing",
			Message: "There is no PriorityLevelConfiguration " + strconv.Quote(fs.Spec.PriorityLevelConfiguration.Name) +
				": the apiserver skips this FlowSchema when it classifies requests.", TestID: "banner-dangling"})
	}
	for _, c := range fs.Status.Conditions {
		a, t, _ := age(c.LastTransitionTime, now)
		p.Conditions = append(p.Conditions, model.Condition{
			Type: string(c.Type), Status: string(c.Status), Tone: conditionTone(string(c.Status), c.Type != flowcontrolv1.FlowSchemaConditionDangling),
			Reason: c.Reason, Message: c.Message, Age: a, Time: t,
		})
	}
	return p
}

func subjects(ss []flowcontrolv1.Subject) string {
	var out []string
	for _, s := range ss {
		switch {
		case s.User != nil:
			out = append(out, "user "+s.User.Name)
		case s.Group != nil:
			out = append(out, "group "+s.Group.Name)
		case s.ServiceAccount != nil:
			out = append(out, "serviceaccount "+s.ServiceAccount.Namespace+"/"+s.ServiceAccount.Name)
		}
	}
	return join(out)
}

func resourceRules(rs []flowcontrolv1.ResourcePolicyRule) string {
	var out []string
	for _, r := range rs {
		scope := "namespaces " + join(r.Namespaces)
		if r.ClusterScope {
			scope = "cluster-scope"
			if len(r.Namespaces) > 0 {
				scope += " + namespaces " + join(r.Namespaces)
			}
		}
		out = append(out, strings.Join(r.Verbs, ",")+" "+groupsResources(r.APIGroups, r.Resources)+" ("+scope+")")
	}
	return strings.Join(out, "; ")
}

func groupsResources(groups, resources []string) string {
	return "[" + strings.Join(groups, ",") + "]/" + strings.Join(resources, ",")
}

func nonResourceRules(rs []flowcontrolv1.NonResourcePolicyRule) string {
	var out []string
	for _, r := range rs {
		out = append(out, strings.Join(r.Verbs, ",")+" "+strings.Join(r.NonResourceURLs, ","))
	}
	return strings.Join(out, "; ")
}

var priorityLevelColumns = []column{
	{"name", "Name", true},
	{"type", "Type", true},
	{"shares", "Nominal concurrency shares", true},
	{"queues", "Queues", true},
	{"handsize", "Hand size", true},
	{"queuelength", "Queue length limit", true},
	{"age", "Age", true},
}

// plNumbers gives kubectl's PLC columns; Exempt levels and Reject-mode levels
// have no queuing so those cells are "<none>".
func plNumbers(pl *flowcontrolv1.PriorityLevelConfiguration) (shares, queues, hand, qlen string) {
	shares, queues, hand, qlen = "<none>", "<none>", "<none>", "<none>"
	lim := pl.Spec.Limited
	if lim == nil {
		return
	}
	if lim.NominalConcurrencyShares != nil {
		shares = strconv.Itoa(int(*lim.NominalConcurrencyShares))
	}
	if lim.LimitResponse.Queuing != nil {
		qq := lim.LimitResponse.Queuing
		queues, hand, qlen = strconv.Itoa(int(qq.Queues)), strconv.Itoa(int(qq.HandSize)), strconv.Itoa(int(qq.QueueLengthLimit))
	}
	return
}

func numKey(s string) string {
	n, err := strconv.Atoi(s)
	if err != nil {
		return "~"
	}
	return padInt(int64(n))
}

// PriorityLevelList lays out the PriorityLevelConfiguration list page.
func PriorityLevelList(items []*flowcontrolv1.PriorityLevelConfiguration, q ListQuery, now time.Time) model.ListPage {
	const kind = "prioritylevels"
	action := urls.List(kind)
	rows := make([]row, 0, len(items))
	for _, pl := range items {
		ageC, ageKey := ageCell(pl.CreationTimestamp, now)
		shares, queues, hand, qlen := plNumbers(pl)
		rows = append(rows, newRow(kind, action, pl.Name, []model.Cell{
			{Text: string(pl.Spec.Type)}, {Text: shares}, {Text: queues}, {Text: hand}, {Text: qlen}, ageC,
		}, []string{string(pl.Spec.Type), numKey(shares), numKey(queues), numKey(hand), numKey(qlen), ageKey}))
	}
	return table(kind, "PriorityLevelConfigurations", action, priorityLevelColumns, rows, q)
}

// PriorityLevelDetail lays out one PriorityLevelConfiguration and the FlowSchemas that use it.
func PriorityLevelDetail(pl *flowcontrolv1.PriorityLevelConfiguration, schemas []*flowcontrolv1.FlowSchema, now time.Time) model.DetailPage {
	ageText, ageTitle, _ := age(pl.CreationTimestamp, now)
	shares, queues, hand, qlen := plNumbers(pl)
	p := model.DetailPage{
		KindID: "prioritylevels", KindTitle: "PriorityLevelConfigurations", Name: pl.Name,
		Status: model.Badge{Text: string(pl.Spec.Type), Tone: model.ToneNeutral},
		Fields: []model.Field{
			{Label: "Type", Value: string(pl.Spec.Type)},
			{Label: "Nominal concurrency shares", Value: shares},
			{Label: "Queues", Value: queues},
			{Label: "Hand size", Value: hand},
			{Label: "Queue length limit", Value: qlen},
			{Label: "Age", Value: ageText, Hint: ageTitle},
		},
	}
	if lim := pl.Spec.Limited; lim != nil {
		p.Fields = append(p.Fields,
			model.Field{Label: "Limit response", Value: string(lim.LimitResponse.Type)},
			model.Field{Label: "Lendable percent", Value: int32Ptr(lim.LendablePercent),
				Hint: "share of the nominal concurrency other levels may borrow"},
			model.Field{Label: "Borrowing limit percent", Value: int32Ptr(lim.BorrowingLimitPercent),
				Hint: "how much this level may borrow, as a share of its nominal concurrency; <none> means no limit"},
		)
	}
	if ex := pl.Spec.Exempt; ex != nil {
		// v1 Exempt levels take part in borrowing too: they lend nothing of their
		// own but their shares count in the apiserver's concurrency split.
		p.Fields[1] = model.Field{Label: "Nominal concurrency shares", Value: int32Ptr(ex.NominalConcurrencyShares)}
		p.Fields = append(p.Fields, model.Field{Label: "Lendable percent", Value: int32Ptr(ex.LendablePercent)})
	}
	if b, ok := MaintenanceWarning(pl.Name, pl.Annotations, pl.Generation); ok {
		p.Problems = append(p.Problems, b)
	}
	users := model.Section{Title: "FlowSchemas using this priority level", TestID: "flowschemas-using",
		Columns: []string{"#", "FlowSchema", "Matching precedence"}}
	for _, e := range apf.Sequence(schemas, nil) {
		if !e.Builtin && e.FlowSchema.Spec.PriorityLevelConfiguration.Name == pl.Name {
			users.Rows = append(users.Rows, []string{strconv.Itoa(e.Position), e.FlowSchema.Name, strconv.Itoa(int(e.FlowSchema.Spec.MatchingPrecedence))})
		}
	}
	p.Sections = append(p.Sections, users)
	for _, c := range pl.Status.Conditions {
		a, t, _ := age(c.LastTransitionTime, now)
		p.Conditions = append(p.Conditions, model.Condition{
			Type: string(c.Type), Status: string(c.Status), Tone: model.ToneNeutral,
			Reason: c.Reason, Message: c.Message, Age: a, Time: t,
		})
	}
	return p
}

func int32Ptr(p *int32) string {
	if p == nil {
		return "<none>"
	}
	return strconv.Itoa(int(*p))
}
