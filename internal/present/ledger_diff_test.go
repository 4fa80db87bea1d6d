package present

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/managedfields"
)

func TestUnifiedLinesNumbersBothSides(t *testing.T) {
	before := "a: 1\nb: 2\nc: 3\nd: 4\n"
	after := "a: 1\nb: 20\nc: 3\nd: 4\ne: 5\n"
	d, _ := audit.Diff(before, after)
	lines, added, removed := UnifiedLines(d)
	if added != 2 || removed != 1 {
		t.Fatalf("added %d removed %d\n%s", added, removed, d)
	}
	var got []string
	for _, l := range lines {
		got = append(got, fmt.Sprintf("%s|%s|%s|%s", l.Kind, l.Old, l.New, l.Text))
	}
	want := []string{"hunk|||@@ -1,4 +1,5 @@", "context|1|1|a: 1", "removed|2||b: 2", "added||2|b: 20",
		"context|3|3|c: 3", "context|4|4|d: 4", "added||5|e: 5"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("lines\n%q\nwant\n%q", got, want)
	}
}

func TestStepDiffNotes(t *testing.T) {
	watch := func(action, diff string) ledger.Entry {
		return ledger.Entry{Source: ledger.SourceWatch, Action: action, Diff: diff, RV: "7"}
	}
	for _, tc := range []struct {
		name  string
		e     ledger.Entry
		title string
		note  string
	}{
		{"bookkeeping", watch(ledger.ActionUpdate, ""), "Changes the watch observed", "bookkeeping"},
		{"created", watch(ledger.ActionCreate, "@@ -0,0 +1 @@\n+a\n"), "Created with", ""},
		{"deleted", watch(ledger.ActionDelete, "@@ -1 +0,0 @@\n-a\n"), "Deleted", ""},
		{"cut", watch(ledger.ActionUpdate, "@@ -1 +1 @@\n-a\n+b\n"+strings.Repeat(" x\n", maxDiffShown/3)), "Changes the watch observed", "cut"},
		{"console", ledger.Entry{Source: ledger.SourceConsole, Action: ledger.ActionUpdate, Diff: "@@ -1 +1 @@\n-a\n+b\n"}, "The console's diff", ""},
	} {
		d := StepDiff(tc.e)
		if d == nil || d.Title != tc.title || !strings.Contains(d.Note, tc.note) || (tc.note == "" && d.Note != "") {
			t.Errorf("%s: %+v", tc.name, d)
		}
	}
	if d := StepDiff(ledger.Entry{Source: ledger.SourceAPIServer, Action: ledger.ActionUpdate}); d != nil {
		t.Errorf("an entry without a diff shows %+v", d)
	}
}

func TestLedgerManagersAndObservedRows(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ms := LedgerManagers([]managedfields.Manager{{Manager: "helm", Operation: "Apply", Subresource: "status", Time: at,
		Fields: []string{"a", "b", "c", "d", "e", "f", "g"}}})
	if len(ms) != 1 || ms[0].Time != "2026-01-02 03:04:05 UTC" || ms[0].Manager != "helm" || ms[0].Subresource != "status" ||
		fmt.Sprint(ms[0].Fields) != "[a b c d e … 2 more]" {
		t.Fatalf("%+v", ms)
	}
	r := LedgerRow(ledger.Entry{Source: ledger.SourceWatch, Manager: "kubectl-edit", Time: at, Kind: "csidrivers", Name: "a b",
		Action: ledger.ActionUpdate, Result: ledger.ResultOK}, "CSIDriver")
	if r.Source != "observed" || r.Manager != "kubectl-edit" || r.User != "" || r.UserHref != "" || r.HistoryHref != "/ledger/csidrivers/a%20b" {
		t.Fatalf("%+v", r)
	}
	if a := LedgerAbout(ledger.Stats{Backend: "sqlite", Entries: 5000}); a.Entries != "5,000 entries" {
		t.Fatalf("%+v", a)
	}
}
