package handlers

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// writeRecord is one write performed through clusterdesk, for the audit line.
type writeRecord struct {
	Verb   string // "create", "update", "delete", "approve", "deny"
	Kind   string // the API kind, "FlowSchema"
	Name   string
	Before string // resourceVersion the write started from, "" if none
	After  string // resourceVersion the API server answered with, "" if none
	DryRun bool
	Err    error
}

// audit logs one structured line per write (dry runs included), the trail a
// later audit view reads: who, verb, kind, name, resourceVersion before and
// after, dry run, and the result (ok, or the API server's reason).
func (h *Handlers) audit(r writeRecord) {
	result := "ok"
	if r.Err != nil {
		result = string(apierrors.ReasonForError(r.Err))
		if result == "" {
			result = "error"
		}
	}
	h.deps.Log.Info("write", "who", h.deps.User, "verb", r.Verb, "kind", r.Kind, "name", r.Name,
		"rvBefore", r.Before, "rvAfter", r.After, "dryRun", r.DryRun, "result", result, "err", errString(r.Err))
}
