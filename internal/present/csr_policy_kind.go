package present

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// The CSRApprovalPolicies as a kind of the registry: their list and detail
// pages (the CSR queue's verdicts and the agreement page are csr_verdicts.go
// and csr_policies.go).

const csrPolicyKind = "csrapprovalpolicies"

var csrPolicyColumns = []column{
	{"name", "Name", true},
	{"signers", "Signers", true},
	{"decision", "Decision", true},
	{"runs", "Runs", true},
	{"age", "Age", true},
}

// policyRuns is a policy's state in a word: whether it would run.
func policyRuns(err error) model.Badge {
	if err != nil {
		return model.Badge{Text: "Does not run", Tone: model.ToneError, Hint: err.Error()}
	}
	return model.Badge{Text: "Runs", Tone: model.ToneOK}
}

func decisionBadge(d csrpolicy.Decision) model.Badge {
	if d == csrpolicy.Deny {
		return model.Badge{Text: string(d), Tone: model.ToneError}
	}
	return model.Badge{Text: string(d), Tone: model.ToneOK}
}

// CSRPolicyList lays out the CSRApprovalPolicy list page: what each policy
// decides for which signers, and whether it runs at all.
func CSRPolicyList(items []*unstructured.Unstructured, q ListQuery, now time.Time) model.ListPage {
	action := urls.List(csrPolicyKind)
	rows := make([]row, 0, len(items))
	for _, u := range items {
		c := csrpolicy.CompileObject(u)
		ageC, ageKey := ageCell(u.GetCreationTimestamp(), now)
		signers := join(c.Policy.Signers)
		runs := policyRuns(c.Err)
		cells := []model.Cell{
			{Text: signers, Mono: true},
			{Badges: []model.Badge{decisionBadge(c.Policy.Decision)}},
			{Badges: []model.Badge{runs}},
			ageC,
		}
		rows = append(rows, newRow(csrPolicyKind, action, u.GetName(), cells,
			[]string{signers, string(c.Policy.Decision), runs.Text, ageKey}))
	}
	return table(csrPolicyKind, "CSRApprovalPolicies", action, csrPolicyColumns, rows, q)
}

// CSRPolicyDetail lays out one policy: what it decides for which signers, its
// CEL, and where its error is when it would not run; the comparison with past
// decisions is a link (it reads the requests and their Nodes as the user).
func CSRPolicyDetail(u *unstructured.Unstructured, now time.Time) model.DetailPage {
	c := csrpolicy.CompileObject(u)
	ageText, ageTitle, _ := age(u.GetCreationTimestamp(), now)
	p := model.DetailPage{
		KindID: csrPolicyKind, KindTitle: "CSRApprovalPolicies", Name: u.GetName(),
		Status: policyRuns(c.Err),
		Fields: []model.Field{
			{Label: "Signers", Value: join(c.Policy.Signers), Mono: true},
			{Label: "Decision", Badges: []model.Badge{decisionBadge(c.Policy.Decision)}},
			{Label: "Reason", Value: c.Policy.Reason},
			{Label: "Message", Value: c.Policy.Message},
			{Label: "Age", Value: ageText, Hint: ageTitle},
		},
	}
	expr := model.Section{Title: "Expression (CEL)", TestID: "policy-expression",
		Columns: []string{"Line", "CEL"}}
	for i, line := range strings.Split(strings.TrimRight(c.Policy.Expression, "\n"), "\n") {
		expr.Rows = append(expr.Rows, []string{strconv.Itoa(i + 1), line})
	}
	p.Sections = append(p.Sections, expr)
	if c.Err != nil {
		msg := c.Err.Error()
		var ce *csrpolicy.CompileError
		if errors.As(c.Err, &ce) {
			if n := ce.ExpressionLine(); n > 0 {
				msg = "Line " + strconv.Itoa(n) + " of the expression: " + ce.Issues
			}
		}
		p.Problems = append(p.Problems, model.Banner{Tone: model.ToneError, Title: "This policy does not run",
			Message: msg + " The queue shows it as an error on every request of its signers, and clusterdesk approver skips it.",
			TestID:  "policy-error"})
		return p
	}
	p.Insights = append(p.Insights, model.Insight{Title: "Against past decisions", TestID: "policy-agreement",
		Intro: "What this policy would have decided for the requests people decided that are still in the cluster.",
		Fields: []model.RichField{{Label: "Comparison",
			Value: model.Rich{Text: "Compare with past decisions", Href: urls.CSRPolicy(u.GetName())}}}})
	return p
}
