package handlers

import (
	"context"
	"strings"

	"github.com/clusterdesk/clusterdesk/handlers/csrs"
	"github.com/clusterdesk/clusterdesk/internal/decide"
	"github.com/clusterdesk/clusterdesk/internal/issue"
)

// The CSR pages (handlers/csrs) run the decision and upload use cases; their
// records go to the one audit trail (edit_audit.go) through requestAudit.

// Decided records one CSR decision with who made it.
func (a requestAudit) Decided(_ context.Context, d decide.Decision) {
	a.h.trail.record(a.c, csrRecord(d))
}

// Issued records one certificate upload with who made it.
func (a requestAudit) Issued(_ context.Context, o issue.Outcome) {
	rec := writeRecord{Verb: "issue", Kind: "CertificateSigningRequest", Name: o.Ref.Name, Err: o.Err}
	if o.Before != nil {
		rec.From, rec.Before = csrs.TypedCSR(o.Before), o.Before.ResourceVersion
	}
	if o.After != nil {
		rec.To, rec.After = csrs.TypedCSR(o.After), o.After.ResourceVersion
	}
	a.h.trail.record(a.c, rec)
}

// csrRecord is the audit record of one decision, with the CSR as DecideCSR
// read it and as the API server stored it.
func csrRecord(d decide.Decision) writeRecord {
	verb := d.Verb()
	rec := writeRecord{Verb: strings.ToLower(verb[:len(verb)-1]), Kind: "CertificateSigningRequest", Name: d.Ref.Name, Err: d.Err, Reason: d.Text}
	if d.Before != nil {
		rec.From, rec.Before = csrs.TypedCSR(d.Before), d.Before.ResourceVersion
	}
	if d.After != nil {
		rec.To, rec.After = csrs.TypedCSR(d.After), d.After.ResourceVersion
	}
	return rec
}
