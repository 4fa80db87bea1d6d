package present

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/activity"
	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/views/model"
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

func TestHistoryDiffNotes(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    activity.Entry
		note string
	}{
		{"dropped", activity.Entry{Op: activity.OpUpdated, DiffDropped: true}, "dropped"},
		{"bookkeeping", activity.Entry{Op: activity.OpUpdated}, "bookkeeping"},
		{"cut", activity.Entry{Op: activity.OpCreated, Diff: "@@ -0,0 +1 @@\n+a\n", DiffTruncated: true}, "cut"},
	} {
		d := HistoryDiff(tc.e)
		if !strings.Contains(d.Note, tc.note) {
			t.Errorf("%s: note %q", tc.name, d.Note)
		}
	}
}

func TestActivityRowPresents(t *testing.T) {
	e := activity.Entry{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Kind: "csidrivers", Name: "a b", Source: activity.SourceManagedFields,
		Op: "apply", Manager: "helm", Operation: "Apply", Subresource: "status"}
	r := ActivityRow(e, "CSIDriver", "/csidrivers/a%20b")
	if r.Time != "2026-01-02 03:04:05 UTC" || r.TimeISO != "2026-01-02T03:04:05Z" || r.HistoryHref != "/csidrivers/a%20b/history" ||
		r.SourceLabel != "managedFields" || r.ChangeTone != model.ToneNeutral || r.Kind != "CSIDriver" {
		t.Fatalf("%+v", r)
	}
	e.Fields = []string{"a", "b", "c", "d", "e", "f", "g"}
	if r := ActivityRow(e, "CSIDriver", ""); fmt.Sprint(r.Fields) != "[a b c d e … 2 more]" || len(e.Fields) != 7 {
		t.Fatalf("fields %q (entry %q)", r.Fields, e.Fields)
	}
	if a := ActivityAbout(time.Time{}, 5000, 3); a.Capacity != "5,000 changes" || a.Dropped == "" {
		t.Fatalf("%+v", a)
	}
}
