package present

import (
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/ledgerview"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func TestLedgerAbout(t *testing.T) {
	got := LedgerAbout(ledger.Stats{Backend: "postgres", Entries: 1234567, Oldest: time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC),
		Retention: 400 * 24 * time.Hour})
	want := model.LedgerAbout{Backend: "PostgreSQL", Entries: "1,234,567 entries", Oldest: "2025-10-01 00:00:00 UTC", Retention: "kept 400 days"}
	if got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
	if got := LedgerAbout(ledger.Stats{Backend: "sqlite"}); got.Oldest != "none yet" || got.Retention != "kept forever" || got.Entries != "0 entries" {
		t.Errorf("empty: %+v", got)
	}
	if got := LedgerAbout(ledger.Stats{Entries: 1, Retention: 6 * time.Hour}); got.Entries != "1 entry" || got.Retention != "kept 6 hours" {
		t.Errorf("%+v", got)
	}
	got = LedgerAbout(ledger.Stats{Retention: 400 * 24 * time.Hour, MaxEntries: 10_000_000, PrunedForSize: 1500})
	if want := "kept 400 days, at most 10,000,000 entries (1,500 oldest pruned for size since the console started)"; got.Retention != want {
		t.Errorf("bounded by size: %q, want %q", got.Retention, want)
	}
}

func TestLedgerRow(t *testing.T) {
	r := LedgerRow(ledger.Entry{Source: ledger.SourceConsole, User: "alice", Impersonator: "system:serviceaccount:cd:cd",
		Action: ledger.ActionDeny, Kind: "csrs", Name: "n", Signer: "example.com/s", Code: 403, Result: ledger.ResultDenied,
		Reason: "forbidden"}, "CertificateSigningRequest")
	if r.Result != "denied 403" || r.ResultTone != model.ToneError || r.ActionTone != model.ToneError || r.Source != "console" ||
		r.UserHref != urls.LedgerUser("alice") || r.SignerHref != urls.LedgerSigner("example.com/s") ||
		r.HistoryHref != urls.LedgerObject("csrs", "n", "") || r.Impersonator == "" {
		t.Errorf("%+v", r)
	}
	if r := LedgerRow(ledger.Entry{Verb: "patch", Resource: "widgets"}, ""); r.Action != "patch" || r.Kind != "widgets" || r.HistoryHref != "" || r.UserHref != "" {
		t.Errorf("an entry of no known kind: %+v", r)
	}
}

func TestLedgerHeading(t *testing.T) {
	for _, tc := range []struct {
		f    ledgerview.Filter
		want string
	}{
		{ledgerview.Filter{}, "Ledger"},
		{ledgerview.Filter{User: "alice"}, "What alice did"},
		{ledgerview.Filter{Signer: "example.com/x"}, "Decisions for signer example.com/x"},
	} {
		if got, _ := LedgerHeading(tc.f); got != tc.want {
			t.Errorf("%+v: %q", tc.f, got)
		}
	}
}

func TestLedgerCSRListsManySANsBehindMore(t *testing.T) {
	var s ledgerview.CSRStory
	s.RequestErr = "not recorded"
	c := LedgerCSR(s)
	if c.RequestErr == "" || len(c.Request) == 0 {
		t.Fatalf("%+v", c)
	}
	f := listField("SANs", make([]string, 200))
	if len(f.More) != 190 {
		t.Errorf("%d behind more", len(f.More))
	}
}

// The fold line: hidden with a link that shows, shown with a link that
// hides, none where nothing is folded; the links keep the rest of the filter.
func TestLedgerFold(t *testing.T) {
	f := ledgerview.Filter{Kinds: []string{"crds"}, Source: "apiserver"}
	fold := LedgerFold(f)
	if fold == nil || !fold.Hidden || !strings.Contains(fold.Text, "hidden") ||
		fold.Href != "/ledger?housekeeping=show&kind=crds&source=apiserver" {
		t.Fatalf("folded: %+v", fold)
	}
	f.ShowHousekeeping = true
	if fold = LedgerFold(f); fold == nil || fold.Hidden || fold.Href != "/ledger?kind=crds&source=apiserver" {
		t.Fatalf("shown: %+v", fold)
	}
	for _, f := range []ledgerview.Filter{{User: "system:apiserver"}, {Signer: "example.com/x"}} {
		if fold := LedgerFold(f); fold != nil {
			t.Errorf("%+v folds nothing but says %+v", f, fold)
		}
	}
}
