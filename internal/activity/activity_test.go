package activity

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/audit"
)

var t0 = time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)

func mf(manager, op string, at time.Time, fields string) metav1.ManagedFieldsEntry {
	tm := metav1.NewTime(at)
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationType(op), Time: &tm,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

func driver(name, rv string, attach bool, managed ...metav1.ManagedFieldsEntry) *storagev1.CSIDriver {
	return &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv, ManagedFields: managed},
		Spec: storagev1.CSIDriverSpec{AttachRequired: &attach}}
}

func TestFieldPaths(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  string
		want []string
	}{
		{"fields and self markers", `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:attachRequired":{}}}`,
			[]string{"metadata.labels.app", "spec.attachRequired"}},
		{"keyed list item", `{"f:status":{"f:conditions":{"k:{\"type\":\"Approved\"}":{".":{},"f:message":{},"f:type":{}}}}}`,
			[]string{"status.conditions[type=Approved].message", "status.conditions[type=Approved].type"}},
		{"set values and depth cap", `{"f:spec":{"f:volumeLifecycleModes":{"v:\"Persistent\"":{}},"f:a":{"f:b":{"f:c":{"f:d":{}}}}}}`,
			[]string{"spec.a.b.c", "spec.volumeLifecycleModes[Persistent]"}},
		{"empty", ``, nil},
		{"malformed", `{"f:spec":`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := FieldPaths([]byte(tc.raw))
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("FieldPaths = %q, want %q", got, tc.want)
			}
		})
	}
	var many strings.Builder
	many.WriteString(`{"f:data":{`)
	for i := range 30 {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `"f:k%02d":{}`, i)
	}
	many.WriteString("}}")
	got := FieldPaths([]byte(many.String()))
	if len(got) != maxFields+1 || got[maxFields] != "… 5 more" {
		t.Fatalf("long list: %d paths, last %q", len(got), got[len(got)-1])
	}
}

func TestChangedCreditsNewAndNewerManagers(t *testing.T) {
	before := []metav1.ManagedFieldsEntry{mf("kubectl", "Update", t0, `{"f:spec":{}}`), mf("helm", "Apply", t0, `{"f:metadata":{}}`)}
	after := []metav1.ManagedFieldsEntry{mf("kubectl", "Update", t0, `{"f:spec":{}}`), mf("helm", "Apply", t0.Add(time.Minute), `{"f:metadata":{}}`),
		mf("clusterdesk", "Update", t0.Add(time.Minute), `{"f:spec":{"f:x":{}}}`)}
	got := Changed(before, after)
	if len(got) != 2 || got[0].Manager != "helm" || got[1].Manager != "clusterdesk" {
		t.Fatalf("Changed = %+v", got)
	}
	if len(Changed(after, after)) != 0 {
		t.Fatal("no change credited someone")
	}
}

func TestFromManagedFields(t *testing.T) {
	got := FromManagedFields("csidrivers", "d", "7", []metav1.ManagedFieldsEntry{mf("kube-controller-manager", "Update", t0, `{"f:spec":{"f:fsGroupPolicy":{}}}`)})
	if len(got) != 1 || got[0].Source != SourceManagedFields || got[0].Manager != "kube-controller-manager" || got[0].Op != "update" ||
		!got[0].Time.Equal(t0) || fmt.Sprint(got[0].Fields) != "[spec.fsGroupPolicy]" || got[0].RV != "7" {
		t.Fatalf("%+v", got)
	}
}

func TestStoreRecordsChangesWithDiffAndCredit(t *testing.T) {
	s := NewStore(Options{Now: func() time.Time { return t0 }})
	old := driver("d", "1", true, mf("kubectl", "Update", t0, `{"f:spec":{}}`))
	cur := driver("d", "2", false, mf("kubectl", "Update", t0, `{"f:spec":{}}`), mf("ops-tool", "Apply", t0.Add(time.Second), `{"f:spec":{"f:attachRequired":{}}}`))
	s.Add(Change{Kind: "csidrivers", New: old})
	s.Add(Change{Kind: "csidrivers", Old: old, New: cur})
	s.Add(Change{Kind: "csidrivers", Old: cur, New: cur}) // relist: same version, no entry
	s.Add(Change{Kind: "csidrivers", Old: cur})

	got := s.History("csidrivers", "d")
	if len(got) != 3 {
		t.Fatalf("%d entries, want 3: %+v", len(got), got)
	}
	del, upd, cre := got[0], got[1], got[2]
	if del.Op != OpDeleted || upd.Op != OpUpdated || cre.Op != OpCreated {
		t.Fatalf("ops %s %s %s", del.Op, upd.Op, cre.Op)
	}
	if upd.Manager != "ops-tool" || upd.Operation != "Apply" || upd.PrevRV != "1" || upd.RV != "2" ||
		!strings.Contains(upd.Diff, "-  attachRequired: true") || !strings.Contains(upd.Diff, "+  attachRequired: false") {
		t.Fatalf("update entry %+v", upd)
	}
	if strings.Contains(upd.Diff, "resourceVersion") || strings.Contains(upd.Diff, "managedFields") {
		t.Fatalf("bookkeeping in the diff:\n%s", upd.Diff)
	}
	if !strings.Contains(cre.Diff, "+  name: d") || !strings.Contains(del.Diff, "-  name: d") {
		t.Fatalf("create/delete diffs:\n%s\n%s", cre.Diff, del.Diff)
	}
	if cre.Seq >= upd.Seq || upd.Seq >= del.Seq {
		t.Fatalf("sequence not increasing: %d %d %d", cre.Seq, upd.Seq, del.Seq)
	}
}

func TestRingIsBoundedAndKeepsNewest(t *testing.T) {
	s := NewStore(Options{Capacity: 3})
	for i := range 5 {
		s.Add(Change{Kind: "csidrivers", New: driver(fmt.Sprintf("d%d", i), "1", true)})
	}
	got := s.Entries()
	if len(got) != 3 || got[0].Name != "d4" || got[2].Name != "d2" {
		t.Fatalf("entries %v", names(got))
	}
	if s.Capacity() != 3 {
		t.Fatalf("capacity %d", s.Capacity())
	}
}

func TestDiffBudgetDropsOldestDiffs(t *testing.T) {
	s := NewStore(Options{Capacity: 10, DiffBytes: 300})
	for i := range 4 {
		s.Add(Change{Kind: "csidrivers", New: driver(fmt.Sprintf("driver-%d", i), "1", true)})
	}
	got := s.Entries()
	if got[0].Diff == "" || got[0].DiffDropped {
		t.Fatalf("newest diff dropped: %+v", got[0])
	}
	if !got[len(got)-1].DiffDropped || got[len(got)-1].Diff != "" {
		t.Fatalf("oldest diff kept: %+v", got[len(got)-1])
	}
	total := 0
	for _, e := range got {
		total += len(e.Diff)
	}
	if total > 300 {
		t.Fatalf("%d bytes of diffs kept, budget 300", total)
	}
}

func TestAttributionEitherOrder(t *testing.T) {
	s := NewStore(Options{})
	attr := s.Attributor(func(group, resource string) (string, bool) {
		return "csidrivers", group == "storage.k8s.io" && resource == "csidrivers"
	})
	// The write's record first, then its watch event.
	attr(audit.Record{User: "alice", Verb: "update", Kind: "CSIDriver", APIGroup: "storage.k8s.io", Resource: "csidrivers", Name: "a", RVAfter: "5", Result: audit.ResultOK})
	s.Add(Change{Kind: "csidrivers", Old: driver("a", "4", true), New: driver("a", "5", false)})
	// The watch event first, then the record.
	s.Add(Change{Kind: "csidrivers", Old: driver("b", "6", true), New: driver("b", "7", false)})
	attr(audit.Record{User: "bob", Verb: "update", Kind: "CSIDriver", APIGroup: "storage.k8s.io", Resource: "csidrivers", Name: "b", RVAfter: "7", Result: audit.ResultOK})
	// Dry runs and refusals credit nobody.
	attr(audit.Record{User: "eve", Verb: "update", Kind: "CSIDriver", APIGroup: "storage.k8s.io", Resource: "csidrivers", Name: "c", RVAfter: "9", DryRun: true, Result: audit.ResultOK})
	s.Add(Change{Kind: "csidrivers", Old: driver("c", "8", true), New: driver("c", "9", false)})
	// A deletion matches without a version.
	attr(audit.Record{User: "carol", Verb: "delete", Kind: "CSIDriver", APIGroup: "storage.k8s.io", Resource: "csidrivers", Name: "a", Result: audit.ResultOK})
	s.Add(Change{Kind: "csidrivers", Old: driver("a", "5", false)})

	who := map[string]string{}
	for _, e := range s.Entries() {
		who[e.Name+"/"+e.Op] = e.User
	}
	want := map[string]string{"a/updated": "alice", "b/updated": "bob", "c/updated": "", "a/deleted": "carol"}
	if fmt.Sprint(who) != fmt.Sprint(want) {
		t.Fatalf("users %v, want %v", who, want)
	}
}

func TestEnqueueNeverBlocks(t *testing.T) {
	s := NewStore(Options{Queue: 1})
	s.Enqueue(Change{Kind: "csidrivers", New: driver("a", "1", true)})
	s.Enqueue(Change{Kind: "csidrivers", New: driver("b", "1", true)})
	if s.Dropped() != 1 {
		t.Fatalf("dropped %d", s.Dropped())
	}
}

func TestParseQueryAndMatch(t *testing.T) {
	now := t0.Add(10 * time.Hour)
	q, problems := ParseQuery(url.Values{"kind": {"crds", "csrs", "crds"}, "who": {" Alice "}, "since": {"2h"},
		"until": {"2026-11-22T11:30"}, "source": {"watch"}}, now)
	if len(problems) != 0 || fmt.Sprint(q.Kinds) != "[crds csrs]" || q.Who != "Alice" || q.Source != SourceWatch ||
		!q.Since.Equal(now.Add(-2*time.Hour)) || !q.Until.Equal(time.Date(2026, 11, 22, 11, 30, 0, 0, time.UTC)) {
		t.Fatalf("query %+v problems %v", q, problems)
	}
	in := Entry{Kind: "crds", Source: SourceWatch, User: "alice@example.com", Time: now.Add(-time.Hour)}
	for _, tc := range []struct {
		name string
		e    Entry
		want bool
	}{
		{"matches", in, true},
		{"other kind", with(in, func(e *Entry) { e.Kind = "csidrivers" }), false},
		{"other source", with(in, func(e *Entry) { e.Source = SourceManagedFields }), false},
		{"manager matches who", with(in, func(e *Entry) { e.User, e.Manager = "", "ALICE-bot" }), true},
		{"nobody", with(in, func(e *Entry) { e.User = "bob" }), false},
		{"too old", with(in, func(e *Entry) { e.Time = now.Add(-3 * time.Hour) }), false},
		{"too new", with(in, func(e *Entry) { e.Time = now }), false},
	} {
		if got := q.Match(tc.e); got != tc.want {
			t.Errorf("%s: Match = %v", tc.name, got)
		}
	}
	if v := q.Values().Encode(); v != "kind=crds&kind=csrs&since=2h&source=watch&until=2026-11-22T11%3A30&who=Alice" {
		t.Errorf("Values = %s", v)
	}
	_, problems = ParseQuery(url.Values{"since": {"yesterday"}, "until": {"7d"}}, now)
	if len(problems) != 1 || !strings.Contains(problems[0], "yesterday") {
		t.Errorf("problems %v", problems)
	}
}

func with(e Entry, f func(*Entry)) Entry { f(&e); return e }

func TestFilterSortsNewestFirstAndAppliesAccess(t *testing.T) {
	entries := []Entry{
		{Kind: "crds", Name: "a", Time: t0, Seq: 1},
		{Kind: "csrs", Name: "secret-kind", Time: t0.Add(time.Hour)},
		{Kind: "crds", Name: "b", Time: t0.Add(time.Minute), Seq: 2},
		{Kind: "crds", Name: "c", Time: t0.Add(time.Minute), Seq: 3},
	}
	got := Filter(entries, Query{}, func(k string) bool { return k == "crds" })
	if fmt.Sprint(names(got)) != "[c b a]" {
		t.Fatalf("order %v", names(got))
	}
}

func names(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"=HYPERLINK(\"http://x\")": "'=HYPERLINK(\"http://x\")",
		"+1":                       "'+1",
		"-2+3":                     "'-2+3",
		"@SUM(A1)":                 "'@SUM(A1)",
		"\t=1":                     "'\t=1",
		"\r=1":                     "'\r=1",
		"kubectl":                  "kubectl",
		"":                         "",
		"a=b":                      "a=b",
		// The first non-blank character counts: spreadsheets skip the blanks.
		" =cmd|' /C calc'!A0": "' =cmd|' /C calc'!A0",
		"   +1":               "'   +1",
		"\n@SUM(A1)":          "'\n@SUM(A1)",
		"\u00a0-1":            "'\u00a0-1",
		"  kubectl":           "  kubectl",
		"   ":                 "   ",
	} {
		if got := CSVCell(in); got != want {
			t.Errorf("CSVCell(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteCSVEscapesAndNeutralises(t *testing.T) {
	entries := []Entry{{Time: t0, Kind: "crds", Name: "=cmd|' /C calc'!A0", Source: SourceWatch, Op: OpUpdated,
		Manager: "tool, \"quoted\"\nnext line", Fields: []string{"spec.a", "spec.b"}, RV: "2", PrevRV: "1", Diff: "--- before\n+++ after\n"},
		{Time: t0, Kind: "csrs", Name: "x", DiffDropped: true}}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, entries); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("not valid CSV: %v\n%s", err, buf.String())
	}
	if len(rows) != 3 || fmt.Sprint(rows[0]) != fmt.Sprint(csvHeader) {
		t.Fatalf("rows %q", rows)
	}
	r := rows[1]
	if r[0] != "2026-11-22T02:00:00Z" || r[2] != "'=cmd|' /C calc'!A0" || r[6] != "tool, \"quoted\"\nnext line" ||
		r[9] != "spec.a; spec.b" || r[12] != "'--- before\n+++ after\n" {
		t.Fatalf("row %q", r)
	}
	if !strings.Contains(rows[2][12], "dropped") {
		t.Fatalf("dropped diff not said: %q", rows[2])
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, t0, nil); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Note      string    `json:"note"`
		Observing time.Time `json:"observingSince"`
		Entries   []Entry   `json:"entries"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil || !strings.Contains(doc.Note, "audit log is the authority") ||
		!doc.Observing.Equal(t0) || doc.Entries == nil {
		t.Fatalf("doc %+v err %v: %s", doc, err, buf.String())
	}
}
