package activity

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strings"
	"time"
)

// csvHeader names the CSV export's columns.
var csvHeader = []string{"time", "kind", "name", "source", "change", "user", "manager", "operation", "subresource",
	"fields", "resourceVersion", "previousResourceVersion", "diff"}

// WriteCSV writes entries as CSV (RFC 4180 quoting) with a header row. Every
// cell that a spreadsheet would read as a formula is neutralised.
func WriteCSV(w io.Writer, entries []Entry) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, e := range entries {
		diff := e.Diff
		if e.DiffDropped {
			diff = "(diff dropped to stay within the memory budget)"
		}
		row := []string{e.Time.UTC().Format(time.RFC3339), e.Kind, e.Name, e.Source, e.Op, e.User, e.Manager, e.Operation,
			e.Subresource, strings.Join(e.Fields, "; "), e.RV, e.PrevRV, diff}
		for i := range row {
			row[i] = CSVCell(row[i])
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// CSVCell neutralises a cell a spreadsheet would evaluate: one whose first
// non-blank character is = + - @ (or that starts with a tab or carriage
// return, which some strip before looking) gets a leading apostrophe, as
// OWASP's CSV injection guidance says. Spreadsheets skip leading spaces
// before reading a formula, so " =cmd|..." is as live as "=cmd|...". Names,
// field managers and users are chosen by whoever writes objects, so they are
// untrusted.
func CSVCell(s string) string {
	t := strings.TrimLeft(s, " \t\r\n\v\f\u00a0\u3000")
	if t == "" {
		return s
	}
	if t != s && (s[0] == '\t' || s[0] == '\r') {
		return "'" + s
	}
	switch t[0] {
	case '=', '+', '-', '@':
		return "'" + s
	}
	return s
}

// Export is the JSON export's document.
type Export struct {
	Note      string    `json:"note"`
	Observing time.Time `json:"observingSince"`
	Entries   []Entry   `json:"entries"`
}

// WriteJSON writes entries as one JSON document with what the view can know.
func WriteJSON(w io.Writer, started time.Time, entries []Entry) error {
	if entries == nil {
		entries = []Entry{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Export{Note: Disclaimer, Observing: started, Entries: entries})
}

// Disclaimer says what the view can and cannot know.
const Disclaimer = "What clusterdesk observed: watch events since it started, and the managedFields of the objects " +
	"it holds now (the last write of each field manager). Changes before it started, between two observed versions, " +
	"or to objects deleted before it started are not seen, and a field manager is not a person. " +
	"The API server's audit log is the authority."
