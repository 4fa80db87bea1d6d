package present

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// PolicyVersionsTestID marks the section on a policy's page.
const PolicyVersionsTestID = "policy-versions"

// PolicyVersionsSection words what each version of a policy decided (issue
// 47, item 4), read from the ledger: one row per version (generation and the
// expression's hash, as the decisions' conditions name them), its approvals
// and denials counted once per request, and its latest decisions. current is
// the policy's generation now (0: unknown).
func PolicyVersionsSection(vs ledger.PolicyVersions, current int64, now time.Time) model.Section {
	s := model.Section{Title: "Decisions by version", TestID: PolicyVersionsTestID,
		Columns: []string{"Generation", "Expression", "Approved", "Denied", "Latest decisions"}}
	if len(vs.Versions) == 0 {
		s.Fields = []model.Field{{Label: "Decisions", Value: "The ledger holds no decision naming this policy's version " +
			"(clusterdesk approver's, or a person's following it here)."}}
		s.Columns = nil
		return s
	}
	for _, v := range vs.Versions {
		gen := strconv.FormatInt(v.Generation, 10)
		if v.Generation == current {
			gen += " (current)"
		}
		var latest []string
		for _, d := range v.Latest {
			did := "approved"
			if d.Action == ledger.ActionDeny {
				did = "denied"
			}
			latest = append(latest, fmt.Sprintf("%s %s %s ago by %s", d.Name, did, ledgerAgo(now.Sub(d.Time)), d.User))
		}
		s.Rows = append(s.Rows, []string{gen, v.Hash, strconv.FormatInt(v.Approved, 10), strconv.FormatInt(v.Denied, 10), strings.Join(latest, "; ")})
	}
	s.Fields = []model.Field{{Label: "Counted", Value: "From the ledger: the decisions whose condition names a version of " +
		"this policy (clusterdesk approver's, and people's following it here), each request once, as long as the ledger keeps them."}}
	if vs.Older > 0 {
		s.Fields = append(s.Fields, model.Field{Label: "Older versions", Value: fmt.Sprintf("%d older versions not shown", vs.Older)})
	}
	return s
}

// ledgerAgo is a duration in its largest unit, as the ages of the lists.
func ledgerAgo(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
