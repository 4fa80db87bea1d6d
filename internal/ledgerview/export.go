package ledgerview

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// csvHeader names the CSV export's columns.
var csvHeader = []string{"time", "source", "id", "auditID", "user", "impersonator", "groups", "action", "verb", "kind", "resource",
	"subresource", "name", "uid", "signer", "code", "result", "reason", "dryRun", "userAgent", "sourceIPs", "diff",
	"resourceVersion", "manager"}

// CSVWriter writes entries as CSV rows (RFC 4180 quoting), one at a time, so
// an export streams from the store to the client. Every cell a spreadsheet
// would read as a formula is neutralised (CSVCell): names, users,
// reasons and user agents are chosen by whoever sends requests.
type CSVWriter struct{ w *csv.Writer }

// NewCSVWriter writes the header row and returns the writer.
func NewCSVWriter(w io.Writer) (*CSVWriter, error) {
	cw := csv.NewWriter(w)
	return &CSVWriter{w: cw}, cw.Write(csvHeader)
}

// Write writes one entry.
func (c *CSVWriter) Write(e ledger.Entry) error {
	row := []string{e.Time.UTC().Format(time.RFC3339Nano), e.Source, e.ID, e.AuditID, e.User, e.Impersonator,
		strings.Join(e.Groups, " "), e.Action, e.Verb, e.Kind, e.Resource, e.Subresource, e.Name, e.UID, e.Signer,
		strconv.Itoa(e.Code), e.Result, e.Reason, strconv.FormatBool(e.DryRun), e.UserAgent,
		strings.Join(e.SourceIPs, " "), e.Diff, e.RV, e.Manager}
	for i := range row {
		row[i] = CSVCell(row[i])
	}
	return c.w.Write(row)
}

// Flush sends what is buffered; the handler calls it every few rows so the
// download moves and at the end.
func (c *CSVWriter) Flush() error {
	c.w.Flush()
	return c.w.Error()
}

// Record is one line of the NDJSON export: the entry with the field names an
// auditor's tools read (the store's Entry has no JSON form of its own).
type Record struct {
	Time          time.Time       `json:"time"`
	Source        string          `json:"source"`
	ID            string          `json:"id"`
	AuditID       string          `json:"auditID,omitempty"` // the API server's; a client may have chosen it
	User          string          `json:"user"`
	Groups        []string        `json:"groups,omitempty"`
	Impersonator  string          `json:"impersonator,omitempty"`
	UserAgent     string          `json:"userAgent,omitempty"`
	SourceIPs     []string        `json:"sourceIPs,omitempty"`
	Verb          string          `json:"verb"`
	Action        string          `json:"action"`
	APIGroup      string          `json:"apiGroup,omitempty"`
	APIVersion    string          `json:"apiVersion,omitempty"`
	Resource      string          `json:"resource"`
	Subresource   string          `json:"subresource,omitempty"`
	Kind          string          `json:"kind"`
	Name          string          `json:"name"`
	UID           string          `json:"uid,omitempty"`
	Signer        string          `json:"signer,omitempty"`
	Code          int             `json:"code"`
	Result        string          `json:"result"`
	Reason        string          `json:"reason,omitempty"`
	DryRun        bool            `json:"dryRun,omitempty"`
	Object        json.RawMessage `json:"object,omitempty"`
	ObjectDropped bool            `json:"objectDropped,omitempty"`
	// ObjectInvalid says the stored object was not JSON and is left out (a
	// line must stay one JSON value).
	ObjectInvalid bool   `json:"objectInvalid,omitempty"`
	Diff          string `json:"diff,omitempty"`
	// ResourceVersion is the version the write left or the watch observed.
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Manager is the field managers an observed version (source watch)
	// credits.
	Manager string `json:"manager,omitempty"`
}

// RecordOf is the export's record of e.
func RecordOf(e ledger.Entry) Record {
	r := Record{Time: e.Time.UTC(), Source: e.Source, ID: e.ID, AuditID: e.AuditID, User: e.User, Groups: e.Groups, Impersonator: e.Impersonator,
		UserAgent: e.UserAgent, SourceIPs: e.SourceIPs, Verb: e.Verb, Action: e.Action, APIGroup: e.APIGroup,
		APIVersion: e.APIVersion, Resource: e.Resource, Subresource: e.Subresource, Kind: e.Kind, Name: e.Name, UID: e.UID,
		Signer: e.Signer, Code: e.Code, Result: e.Result, Reason: e.Reason, DryRun: e.DryRun,
		ObjectDropped: e.ObjectDropped, Diff: e.Diff, ResourceVersion: e.RV, Manager: e.Manager}
	if len(e.Object) > 0 {
		if json.Valid(e.Object) {
			r.Object = e.Object
		} else {
			r.ObjectInvalid = true
		}
	}
	return r
}

// NDJSONWriter writes entries as newline-delimited JSON, one Record a line:
// a reader can process a million-line export without holding it, and a
// download cut short still has whole lines.
type NDJSONWriter struct{ enc *json.Encoder }

// NewNDJSONWriter returns the writer.
func NewNDJSONWriter(w io.Writer) *NDJSONWriter { return &NDJSONWriter{enc: json.NewEncoder(w)} }

// Write writes one entry as one line.
func (n *NDJSONWriter) Write(e ledger.Entry) error { return n.enc.Encode(RecordOf(e)) }

// cutNote is the last row of an export the database stopped answering: the
// status line was already sent, so the file itself must say it is short.
const cutNote = "export cut short, entries are missing: "

// WriteCut ends an export that failed midway with a row saying so.
func (c *CSVWriter) WriteCut(err error) error {
	row := make([]string, len(csvHeader))
	row[0] = CSVCell(cutNote + err.Error())
	if werr := c.w.Write(row); werr != nil {
		return werr
	}
	return c.Flush()
}

// WriteCut ends an export that failed midway with a line {"exportError": …},
// which no Record has.
func (n *NDJSONWriter) WriteCut(err error) error {
	return n.enc.Encode(struct {
		ExportError string `json:"exportError"`
	}{cutNote + err.Error()})
}
