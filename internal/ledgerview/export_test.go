package ledgerview

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

func sampleEntry() ledger.Entry {
	return ledger.Entry{Source: ledger.SourceConsole, ID: "r1", Time: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC),
		User: "=HYPERLINK(\"http://x\")", Impersonator: "system:serviceaccount:cd:clusterdesk", Groups: []string{"a", "b"},
		Verb: "update", Action: ledger.ActionApprove, Kind: "csrs", Name: "@evil", Signer: "example.com/s", Code: 200,
		Result: ledger.ResultOK, Reason: "+1 checked", Diff: "-a\n+b\n", Object: []byte(`{"kind":"CertificateSigningRequest"}`)}
}

func TestCSVRowsNeutraliseFormulas(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewCSVWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(sampleEntry()); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteCut(errors.New("database went away")); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0][0] != "time" {
		t.Fatalf("rows %v", rows)
	}
	for _, cell := range rows[1] {
		if strings.HasPrefix(cell, "=") || strings.HasPrefix(cell, "+") || strings.HasPrefix(cell, "@") {
			t.Errorf("cell %q would be evaluated by a spreadsheet", cell)
		}
	}
	if !strings.Contains(rows[2][0], "cut short") || !strings.Contains(rows[2][0], "database went away") {
		t.Errorf("the last row %q does not say the export is short", rows[2][0])
	}
}

func TestNDJSONOneValidLinePerEntry(t *testing.T) {
	var buf bytes.Buffer
	w := NewNDJSONWriter(&buf)
	bad := sampleEntry()
	bad.ID, bad.Object = "r2", []byte(`{"cut":`)
	for _, e := range []ledger.Entry{sampleEntry(), bad} {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(&buf)
	var recs []Record
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 2 {
		t.Fatalf("%d lines", len(recs))
	}
	if string(recs[0].Object) != `{"kind":"CertificateSigningRequest"}` || recs[0].Impersonator == "" || recs[0].Diff == "" {
		t.Errorf("first record %+v", recs[0])
	}
	if recs[1].Object != nil || !recs[1].ObjectInvalid {
		t.Errorf("an object that is not JSON must be flagged and left out: %+v", recs[1])
	}
}
