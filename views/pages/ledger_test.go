package pages

import (
	"testing"

	"github.com/clusterdesk/clusterdesk/views/internal/viewtest"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// ledgerRow is a row whose every text an API client chose.
func sampleLedgerRow() model.LedgerRow {
	return model.LedgerRow{Time: "2026-11-01 09:00:00 UTC", TimeISO: "2026-11-01T09:00:00Z", User: viewtest.XSS,
		UserHref: "/ledger?user=x", Impersonator: viewtest.XSS, Action: "approve", ActionTone: model.ToneOK, KindID: "csrs",
		Kind: "CertificateSigningRequest", Name: viewtest.XSS, HistoryHref: "/ledger/csrs/x", Signer: viewtest.XSS,
		SignerHref: "/ledger?signer=x", Result: "ok 200", ResultTone: model.ToneOK, Reason: viewtest.XSS, Source: "API server"}
}

func ledgerPage() model.LedgerPage {
	return model.LedgerPage{Chrome: viewtest.Chrome(true), Heading: "What " + viewtest.XSS + " did", Action: "/ledger",
		About:   model.LedgerAbout{Backend: "PostgreSQL", Entries: "3 entries", Oldest: "2026-11-01 09:00:00 UTC", Retention: "kept 400 days"},
		Kinds:   []model.Option{{Value: "csrs", Label: "CertificateSigningRequests", Selected: true}},
		Actions: []model.Option{{Value: "approve", Label: "approve"}}, Results: []model.Option{{Value: "", Label: "Any result"}},
		Sources: []model.Option{{Value: "", Label: "Every client"}}, User: viewtest.XSS, Rows: []model.LedgerRow{sampleLedgerRow()},
		NextHref: "/ledger?after=m1", FirstHref: "/ledger", CSVURL: "/ledger.csv", NDJSONURL: "/ledger.ndjson"}
}

func ledgerHistoryPage() model.LedgerHistoryPage {
	diff := model.Diff{Title: "The console's diff", Lines: []model.DiffLine{{Kind: model.DiffAdded, Text: viewtest.XSS}}}
	return model.LedgerHistoryPage{Chrome: viewtest.Chrome(true), KindID: "csrs", Kind: "CertificateSigningRequest",
		Name: viewtest.XSS, Gone: true, About: ledgerPage().About, UIDs: []model.Crumb{{Label: "a", Href: "/ledger/csrs/x?uid=a"}, {Label: "b"}},
		Steps: []model.LedgerStep{{Row: sampleLedgerRow()}, {Row: sampleLedgerRow(), Diff: &diff}},
		CSR: &model.LedgerCSR{Request: []model.Field{{Label: "Subject", Value: viewtest.XSS}}, Decisions: []model.LedgerRow{sampleLedgerRow()},
			Issued: []model.LedgerCertificate{{Serial: "0A:1B", Subject: viewtest.XSS}, {Err: viewtest.XSS}}},
		CSVURL: "/ledger/csrs/x?format=csv", NDJSONURL: "/ledger/csrs/x?format=ndjson"}
}

func TestLedgerPagesStateTheirCases(t *testing.T) {
	off := ledgerPage()
	off.Off = "runs without a ledger"
	doc, _ := viewtest.Render(t, Ledger(off))
	viewtest.One(t, doc, viewtest.TestID("ledger-off"))
	if doc.Find(viewtest.TestID("ledger-filter")).Length() != 0 {
		t.Error("a console without a ledger shows its filter")
	}
	down := ledgerHistoryPage()
	down.Unreachable = "connection refused"
	doc, _ = viewtest.Render(t, LedgerHistory(down))
	viewtest.One(t, doc, viewtest.TestID("ledger-unreachable"))
	if doc.Find(viewtest.TestID("ledger-step")).Length() != 0 {
		t.Error("an unreachable ledger shows steps")
	}
}
