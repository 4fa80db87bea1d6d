package writeaudit

import (
	"context"

	"github.com/clusterdesk/clusterdesk/internal/editing"
)

// Request is the auditor of one request's writes: what the use cases take as
// their Auditor (editing, flowschemaform, cleanup; decide and issue in csr.go).
type Request struct {
	t   *Trail
	ctx context.Context
}

// For is the auditor of the request whose context is ctx: its records name
// the identity ctx carries (kube.WithIdentity).
func (t *Trail) For(ctx context.Context) Request { return Request{t: t, ctx: ctx} }

// Record records one write of the editor, the FlowSchema form or a cleanup.
func (a Request) Record(w editing.Write) { a.t.record(a.ctx, writeOf(w)) }

// FromCache fills w.From (and w.Before when empty) from the shared cache.
func (a Request) FromCache(w *editing.Write) {
	r := writeOf(*w)
	a.t.before(&r)
	w.From, w.Before = r.From, r.Before
}

func writeOf(w editing.Write) write {
	return write{Verb: w.Verb, Kind: w.Kind, Group: w.Group, Resource: w.Resource, Namespace: w.Namespace, Name: w.Name, Before: w.Before, After: w.After, DryRun: w.DryRun, Err: w.Err, From: w.From, To: w.To, Propagation: string(w.Propagation)}
}
