package present

import (
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

func TestPolicyVersionsSectionWordsEachVersion(t *testing.T) {
	now := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	s := PolicyVersionsSection(ledger.PolicyVersions{Versions: []ledger.PolicyVersion{
		{Generation: 2, Hash: "bbbbbbbbbbbb", Approved: 3, Denied: 1, Latest: []ledger.PolicyDecision{
			{Name: "csr-b", Action: ledger.ActionDeny, User: "system:serviceaccount:clusterdesk:clusterdesk-approver", Time: now.Add(-90 * time.Second)}}},
		{Generation: 1, Hash: "aaaaaaaaaaaa", Approved: 7},
	}, Older: 4}, 2, now)
	if len(s.Rows) != 2 || s.TestID != PolicyVersionsTestID {
		t.Fatalf("section %+v", s)
	}
	if got := strings.Join(s.Rows[0], " | "); got != "2 (current) | bbbbbbbbbbbb | 3 | 1 | csr-b denied 1m ago by system:serviceaccount:clusterdesk:clusterdesk-approver" {
		t.Errorf("row 0: %q", got)
	}
	if got := strings.Join(s.Rows[1], " | "); got != "1 | aaaaaaaaaaaa | 7 | 0 | " {
		t.Errorf("row 1: %q", got)
	}
	if len(s.Fields) != 2 || !strings.Contains(s.Fields[1].Value, "4 older versions") {
		t.Errorf("fields %+v", s.Fields)
	}
	if empty := PolicyVersionsSection(ledger.PolicyVersions{}, 1, now); len(empty.Rows) != 0 || len(empty.Columns) != 0 || len(empty.Fields) != 1 {
		t.Errorf("no decisions: %+v", empty)
	}
}
