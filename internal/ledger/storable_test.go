package ledger_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// noise is n bytes of random hex: a value PostgreSQL cannot compress into
// an index row (a repeated letter it would).
func noise(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, (n+1)/2)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)[:n]
}

// Issue 43: values a client puts in a request that PostgreSQL refuses in a
// TEXT column (NUL, invalid UTF-8) or in a btree index (an index row over
// about 2,700 bytes) no longer fail the batch they came in: they are stored,
// beside the batch's other entries, the same on both backends; a bounded
// indexed value still reads back whole and is still found by a query for it.
func TestValuesPostgreSQLRefusesAreStoredBesideTheBatch(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, ledger.Options{})
		ctx := context.Background()
		longName, longUser, longSigner, longID := noise(t, 10_000), noise(t, 5_000), "example.com/"+noise(t, 4_000), noise(t, 3_000)
		nul := entry("nul", 1, func(e *ledger.Entry) {
			e.Name, e.UserAgent, e.Reason, e.Diff, e.AuditID = "csr-\x00-x", "curl/\x00", "name \"csr-\x00-x\" is invalid", "+\x00\n", "a\x00b"
			e.Groups = []string{"system:\x00"}
		})
		invalid := entry("invalid-utf8", 2, func(e *ledger.Entry) { e.Name, e.User = "csr-\xff\xfe-y", "bob\xc3" })
		long := entry(longID, 3, func(e *ledger.Entry) {
			e.Name, e.User, e.Signer, e.AuditID = longName, longUser, longSigner, noise(t, 20_000)
		})
		batch := []ledger.Entry{entry("before", 0), nul, invalid, long, entry("after", 4)}
		if n, err := s.Append(ctx, batch); err != nil || n != len(batch) {
			t.Fatalf("Append = %d, %v; want %d", n, err, len(batch))
		}

		got := query(t, s, ledger.Query{Oldest: true}).Entries
		wantNUL := nul
		wantNUL.Name, wantNUL.UserAgent, wantNUL.Reason, wantNUL.Diff, wantNUL.AuditID = "csr-␀-x", "curl/␀", "name \"csr-␀-x\" is invalid", "+␀\n", "a␀b"
		wantInvalid := invalid
		wantInvalid.Name, wantInvalid.User = "csr-\uFFFD-y", "bob\uFFFD"
		want := []ledger.Entry{batch[0], wantNUL, wantInvalid, long, batch[4]}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("stored entries (-want +got):\n%s", diff)
		}
		// Each bounded value is found whole, and the value as the client
		// sent it (with its NUL) finds its stored form.
		for _, q := range []ledger.Query{{Name: longName}, {User: longUser}, {Signer: longSigner}, {Kind: "csrs", Name: longName}} {
			if got := ids(query(t, s, q).Entries); !cmp.Equal(got, []string{longID}) {
				t.Errorf("Query(%.40v…) = %.60v, want the long entry only", q, got)
			}
		}
		if got := ids(query(t, s, ledger.Query{Name: "csr-\x00-x"}).Entries); !cmp.Equal(got, []string{"nul"}) {
			t.Errorf("Query(name with NUL) = %v, want [nul]", got)
		}
		// Stored once: the bounded ID still identifies the entry.
		if n, err := s.Append(ctx, batch); err != nil || n != 0 {
			t.Errorf("the batch again = %d, %v; want 0", n, err)
		}
	})
}

// An entry the database refuses for its data, whatever the reason (here a
// rule the test adds: a trigger on SQLite, check constraints on
// PostgreSQL), is stored as a placeholder saying so, and the batch's other
// entries are stored whole: the database refusing one entry never refuses
// its batch.
func TestAnEntryTheDatabaseRefusesIsSetAsideAlone(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, ledger.Options{})
		ctx := context.Background()
		db := rawDB(t, dsn)
		rules := []string{
			"ALTER TABLE ledger_entries ADD CONSTRAINT poison_agent CHECK (user_agent <> 'poison')",
			"ALTER TABLE ledger_entries ADD CONSTRAINT poison_name CHECK (name <> 'poison')",
		}
		if strings.HasPrefix(dsn, "sqlite:") {
			rules = []string{"CREATE TRIGGER poison BEFORE INSERT ON ledger_entries WHEN NEW.user_agent = 'poison' OR NEW.name = 'poison' " +
				"BEGIN SELECT RAISE(ABORT, 'poison'); END"}
		}
		for _, r := range rules {
			if _, err := db.ExecContext(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		badAgent := entry("bad-agent", 1, func(e *ledger.Entry) { e.UserAgent, e.Reason, e.Groups = "poison", "no", []string{"g"} })
		badName := entry("bad-name", 2, func(e *ledger.Entry) { e.Name = "poison" })
		batch := []ledger.Entry{entry("before", 0), badAgent, badName, entry("after", 3)}
		if n, err := s.Append(ctx, batch); err != nil || n != len(batch) {
			t.Fatalf("Append = %d, %v; want %d (two of them placeholders)", n, err, len(batch))
		}
		got := query(t, s, ledger.Query{Oldest: true}).Entries
		if len(got) != 4 {
			t.Fatalf("stored %v, want 4 entries", ids(got))
		}
		if diff := cmp.Diff([]ledger.Entry{batch[0], batch[3]}, []ledger.Entry{got[0], got[3]}); diff != "" {
			t.Errorf("the batch's good entries (-want +got):\n%s", diff)
		}
		// The first placeholder keeps who, what and the outcome; the name
		// was the trouble in the second, which keeps its identity only.
		agent, name := got[1], got[2]
		if agent.ID != "bad-agent" || agent.User != "alice" || agent.Name != "csr-1" || agent.UserAgent != "" || agent.Groups != nil ||
			agent.Code != 200 || !strings.HasPrefix(agent.Reason, "clusterdesk could not store this entry as received") {
			t.Errorf("placeholder of the refused user agent: %+v", agent)
		}
		if name.ID != "bad-name" || name.Name != "" || name.User != "" || !name.Time.Equal(badName.Time) ||
			!strings.HasPrefix(name.Reason, "clusterdesk could not store this entry as received") {
			t.Errorf("placeholder of the refused name: %+v", name)
		}
		t.Logf("placeholder's reason: %s", name.Reason)
	})
}
