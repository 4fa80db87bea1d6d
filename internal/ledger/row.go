package ledger

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// columns are ledger_entries' columns an Entry maps to, in the order of
// entryArgs and scanEntry (seq is read too, for the cursor).
var columns = []string{
	"source", "id", "time_ns", "user_name", "groups_json", "impersonator", "user_agent", "source_ips",
	"verb", "action", "api_group", "api_version", "resource", "subresource", "kind", "name", "uid", "signer",
	"code", "result", "reason", "dry_run", "object", "object_dropped", "diff", "audit_id", "full_values",
	"resource_version", "manager", "policy", "policy_generation", "policy_hash",
}

var (
	columnList  = strings.Join(columns, ", ")
	selectList  = "seq, " + columnList
	placeholder = "(" + strings.TrimSuffix(strings.Repeat("?, ", len(columns)), ", ") + ")"
)

// entryArgs are an entry's values for columns, made storable (storable.go):
// the indexed strings bounded by keyOf, their whole values in full_values. An
// entry without Source, ID or Time is a bug of the caller, refused rather
// than stored unfindable.
func entryArgs(e Entry) ([]any, error) {
	if e.Source == "" || e.ID == "" {
		return nil, errors.New("ledger: an entry needs a Source and an ID")
	}
	if e.Time.IsZero() {
		return nil, fmt.Errorf("ledger: entry %s/%s has no time", e.Source, e.ID)
	}
	if len(e.Object) > MaxObjectBytes {
		return nil, fmt.Errorf("ledger: entry %s/%s: object of %d bytes, more than MaxObjectBytes", e.Source, e.ID, len(e.Object))
	}
	groups, err := jsonList(e.Groups)
	if err != nil {
		return nil, err
	}
	ips, err := jsonList(e.SourceIPs)
	if err != nil {
		return nil, err
	}
	var object any // NULL, not an empty blob, when there is none
	if e.Object != nil {
		object = e.Object
	}
	e = storable(e)
	full := fullValues{ID: e.ID, User: e.User, Name: e.Name, Signer: e.Signer}
	id, user, name, signer := keyOf(e.ID), keyOf(e.User), keyOf(e.Name), keyOf(e.Signer)
	var fullJSON any // NULL unless a value was bounded
	if id != e.ID || user != e.User || name != e.Name || signer != e.Signer {
		b, err := json.Marshal(full)
		if err != nil {
			return nil, err
		}
		fullJSON = string(b)
	}
	return []any{
		e.Source, id, e.Time.UnixNano(), user, groups, e.Impersonator, e.UserAgent, ips,
		e.Verb, e.Action, e.APIGroup, e.APIVersion, e.Resource, e.Subresource, e.Kind, name, e.UID, signer,
		e.Code, e.Result, e.Reason, e.DryRun, object, e.ObjectDropped, e.Diff, e.AuditID, fullJSON,
		e.RV, e.Manager, e.Policy.Name, e.Policy.Generation, e.Policy.Hash,
	}, nil
}

// fullValues are the whole values of the indexed strings of an entry whose
// indexed columns hold them bounded (keyOf): reads return them, so nothing
// is lost but the index's reach (a Query matches the bounded key, which
// holds the whole value's digest).
type fullValues struct {
	ID     string `json:"id"`
	User   string `json:"user"`
	Name   string `json:"name"`
	Signer string `json:"signer"`
}

// jsonList stores a list as JSON text; nil stays nil when read back.
func jsonList(l []string) (string, error) {
	if l == nil {
		return "null", nil
	}
	b, err := json.Marshal(l)
	return string(b), err
}

// scanner is *sql.Row and *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanEntry reads one row of selectList.
func scanEntry(s scanner) (Entry, int64, error) {
	var (
		e            Entry
		seq, timeNS  int64
		groups, ips  string
		object       []byte
		dryRun, drop bool
		full         sql.NullString
	)
	err := s.Scan(&seq, &e.Source, &e.ID, &timeNS, &e.User, &groups, &e.Impersonator, &e.UserAgent, &ips,
		&e.Verb, &e.Action, &e.APIGroup, &e.APIVersion, &e.Resource, &e.Subresource, &e.Kind, &e.Name, &e.UID, &e.Signer,
		&e.Code, &e.Result, &e.Reason, &dryRun, &object, &drop, &e.Diff, &e.AuditID, &full, &e.RV, &e.Manager,
		&e.Policy.Name, &e.Policy.Generation, &e.Policy.Hash)
	if err != nil {
		return Entry{}, 0, err
	}
	if full.Valid {
		var f fullValues
		if err := json.Unmarshal([]byte(full.String), &f); err != nil {
			return Entry{}, 0, fmt.Errorf("ledger: entry %d: full values: %w", seq, err)
		}
		e.ID, e.User, e.Name, e.Signer = f.ID, f.User, f.Name, f.Signer
	}
	e.Time = time.Unix(0, timeNS).UTC()
	e.DryRun, e.ObjectDropped, e.Object = dryRun, drop, object
	if err := json.Unmarshal([]byte(groups), &e.Groups); err != nil {
		return Entry{}, 0, fmt.Errorf("ledger: entry %d: groups: %w", seq, err)
	}
	if err := json.Unmarshal([]byte(ips), &e.SourceIPs); err != nil {
		return Entry{}, 0, fmt.Errorf("ledger: entry %d: source IPs: %w", seq, err)
	}
	return e, seq, nil
}
