package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/editing"
	"github.com/clusterdesk/clusterdesk/internal/flowschemaform"
)

// flowSchemaFormCase is the FlowSchema form's use case for this request's user.
func (h *Handlers) flowSchemaFormCase(c echo.Context) *flowschemaform.Service {
	return &flowschemaform.Service{API: h.deps.Editor, Cache: h.deps.Cluster, Audit: requestAudit{h: h, c: c}}
}

// requestAudit records a use case's writes as the request's user (edit_audit.go).
type requestAudit struct {
	h *Handlers
	c echo.Context
}

func (a requestAudit) Record(w editing.Write) { a.h.trail.record(a.c, recordOf(w)) }

func (a requestAudit) FromCache(w *editing.Write) {
	r := recordOf(*w)
	a.h.trail.before(a.c, &r)
	w.From, w.Before = r.From, r.Before
}

func recordOf(w editing.Write) writeRecord {
	return writeRecord{Verb: w.Verb, Kind: w.Kind, Group: w.Group, Resource: w.Resource, Namespace: w.Namespace, Name: w.Name, Before: w.Before, After: w.After, DryRun: w.DryRun, Err: w.Err, From: w.From, To: w.To, Propagation: string(w.Propagation)}
}
