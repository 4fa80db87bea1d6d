package ledger

import (
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
	"code", "result", "reason", "dry_run", "object", "object_dropped", "diff",
}

var (
	columnList  = strings.Join(columns, ", ")
	selectList  = "seq, " + columnList
	placeholder = "(" + strings.TrimSuffix(strings.Repeat("?, ", len(columns)), ", ") + ")"
)

// entryArgs are an entry's values for columns. An entry without Source, ID or
// Time is a bug of the caller, refused rather than stored unfindable.
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
	return []any{
		e.Source, e.ID, e.Time.UnixNano(), e.User, groups, e.Impersonator, e.UserAgent, ips,
		e.Verb, e.Action, e.APIGroup, e.APIVersion, e.Resource, e.Subresource, e.Kind, e.Name, e.UID, e.Signer,
		e.Code, e.Result, e.Reason, e.DryRun, object, e.ObjectDropped, e.Diff,
	}, nil
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
	)
	err := s.Scan(&seq, &e.Source, &e.ID, &timeNS, &e.User, &groups, &e.Impersonator, &e.UserAgent, &ips,
		&e.Verb, &e.Action, &e.APIGroup, &e.APIVersion, &e.Resource, &e.Subresource, &e.Kind, &e.Name, &e.UID, &e.Signer,
		&e.Code, &e.Result, &e.Reason, &dryRun, &object, &drop, &e.Diff)
	if err != nil {
		return Entry{}, 0, err
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
