// Package activity keeps what the console observed of changes to the kinds it
// shows: watch events since start in a bounded ring (with the diff between the
// observed versions), and the managedFields of the objects in the cache
// (manager, operation, time and fields touched, also from before start). It
// filters and exports them for the auditor views. It is not an audit log: the
// API server's audit log is the authority, and this view cannot see changes
// made before the console started or between two observed versions.
package activity

import "time"

// Where an entry comes from.
const (
	SourceWatch         = "watch"         // a watch event the console observed
	SourceManagedFields = "managedFields" // a managedFields entry of a cached object
)

// The changes a watch event reports.
const (
	OpCreated = "created"
	OpUpdated = "updated"
	OpDeleted = "deleted"
)

// Entry is one row of the activity view.
type Entry struct {
	Seq    uint64    `json:"seq,omitempty"` // order of observation (watch entries)
	Time   time.Time `json:"time"`          // when observed (watch) or the managedFields time
	Kind   string    `json:"kind"`          // the console's kind id: "crds", "csrs"…
	Name   string    `json:"name"`
	Source string    `json:"source"` // SourceWatch or SourceManagedFields
	Op     string    `json:"change"` // created, updated, deleted; for managedFields the operation
	// Manager is the field manager credited: for a watch event the managers
	// whose managedFields entry is new or newer in the observed version.
	Manager     string   `json:"manager,omitempty"`
	Operation   string   `json:"operation,omitempty"` // Apply or Update
	Subresource string   `json:"subresource,omitempty"`
	User        string   `json:"user,omitempty"` // the clusterdesk user, when the write went through clusterdesk
	Fields      []string `json:"fields,omitempty"`
	RV          string   `json:"resourceVersion,omitempty"`
	PrevRV      string   `json:"previousResourceVersion,omitempty"`
	Diff        string   `json:"diff,omitempty"` // unified diff of the previous → this observed version
	// DiffTruncated: the diff was cut at audit.MaxDiff. DiffDropped: it was
	// dropped later to keep the ring within its memory budget.
	DiffTruncated bool `json:"diffTruncated,omitempty"`
	DiffDropped   bool `json:"diffDropped,omitempty"`
}

// Who is the entry's actor for display and filters: the clusterdesk user if
// known, else the field manager.
func (e Entry) Who() string {
	if e.User != "" {
		return e.User
	}
	return e.Manager
}
