package ledger_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// housekeepingCases are entries each named for whether the fold hides it:
// "hk-" entries are the control plane's housekeeping, every other one is
// something an auditor must see in the default list.
func housekeepingCases() []ledger.Entry {
	as := func(user, action, kind string) func(*ledger.Entry) {
		return func(e *ledger.Entry) { e.User, e.Action, e.Kind, e.Signer = user, action, kind, "" }
	}
	return []ledger.Entry{
		entry("hk-apiserver-crd-status", 1, as("system:apiserver", ledger.ActionStatus, "crds")),
		entry("hk-apiserver-fs-update", 2, as("system:apiserver", ledger.ActionUpdate, "flowschemas")),
		entry("hk-kcm-status", 3, as("system:kube-controller-manager", ledger.ActionStatus, "crds")),
		entry("hk-scheduler-update", 4, as("system:kube-scheduler", ledger.ActionUpdate, "flowschemas")),
		entry("hk-kube-system-sa-status", 5, as("system:serviceaccount:kube-system:crd-controller", ledger.ActionStatus, "crds")),
		// A person's write, even a status write.
		entry("person-status", 6, as("alice", ledger.ActionStatus, "crds")),
		// The control plane's creates and deletes.
		entry("apiserver-create", 7, as("system:apiserver", ledger.ActionCreate, "flowschemas")),
		entry("apiserver-delete", 8, as("system:apiserver", ledger.ActionDelete, "flowschemas")),
		// A refused or failed write by the control plane.
		entry("apiserver-denied", 9, as("system:apiserver", ledger.ActionStatus, "crds"), func(e *ledger.Entry) {
			e.Result, e.Code = ledger.ResultDenied, 403
		}),
		entry("kcm-failed", 10, as("system:kube-controller-manager", ledger.ActionUpdate, "crds"), func(e *ledger.Entry) {
			e.Result, e.Code = ledger.ResultFailed, 500
		}),
		// Anything of a CSR: the csrapproving controller's approval, the
		// signer's issue, even a plain update by the controller manager.
		entry("csr-auto-approve", 11, as("system:serviceaccount:kube-system:certificate-controller", ledger.ActionApprove, "csrs")),
		entry("csr-issue", 12, as("system:serviceaccount:kube-system:certificate-controller", ledger.ActionIssue, "csrs")),
		entry("csr-kcm-update", 13, as("system:kube-controller-manager", ledger.ActionUpdate, "csrs")),
		entry("csr-sa-status", 14, as("system:serviceaccount:kube-system:certificate-controller", ledger.ActionStatus, "csrs")),
		// Someone impersonating the API server is a person.
		entry("impersonated-apiserver", 15, as("system:apiserver", ledger.ActionStatus, "crds"), func(e *ledger.Entry) {
			e.Impersonator = "mallory"
		}),
		// A write through the console is always a person's.
		entry("console-as-apiserver", 16, as("system:apiserver", ledger.ActionUpdate, "flowschemas"), func(e *ledger.Entry) {
			e.Source = ledger.SourceConsole
		}),
		// Names that only look like the control plane's: another
		// namespace's service account, a case that differs (SQLite's LIKE
		// would fold it), a name that merely starts the same.
		entry("other-namespace-sa", 17, as("system:serviceaccount:kube-systemx:foo", ledger.ActionStatus, "crds")),
		entry("upper-case-sa", 18, as("System:ServiceAccount:kube-system:foo", ledger.ActionStatus, "crds")),
		entry("apiserver-lookalike", 19, as("system:apiserver-bot", ledger.ActionStatus, "crds")),
	}
}

func TestFoldLeavesOutOnlyTheControlPlanesHousekeeping(t *testing.T) {
	cases := housekeepingCases()
	var all, people []string
	for _, e := range cases {
		all = append(all, e.ID)
		if !strings.HasPrefix(e.ID, "hk-") {
			people = append(people, e.ID)
		}
		// The Go definition (for the views' in-memory store) agrees.
		if got, want := ledger.IsHousekeeping(e), strings.HasPrefix(e.ID, "hk-"); got != want {
			t.Errorf("IsHousekeeping(%s) = %v, want %v", e.ID, got, want)
		}
	}
	slices.Reverse(all)
	slices.Reverse(people)
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, ledger.Options{})
		appendAll(t, s, cases...)
		if got := ids(query(t, s, ledger.Query{}).Entries); !slices.Equal(got, all) {
			t.Errorf("unfolded: %v, want every entry %v", got, all)
		}
		if got := ids(query(t, s, ledger.Query{FoldHousekeeping: true}).Entries); !slices.Equal(got, people) {
			t.Errorf("folded: %v, want %v", got, people)
		}
		// Keyset paging of the folded list: no gap, no duplicate.
		var paged []string
		q := ledger.Query{FoldHousekeeping: true, Limit: 4}
		for {
			p := query(t, s, q)
			paged = append(paged, ids(p.Entries)...)
			if p.Next == "" {
				break
			}
			q.After = p.Next
		}
		if !slices.Equal(paged, people) {
			t.Errorf("folded, 4 a page: %v, want %v", paged, people)
		}
		// The export reads the same selection.
		var exported []string
		err := s.Export(context.Background(), ledger.Query{FoldHousekeeping: true}, func(e ledger.Entry) error {
			exported = append(exported, e.ID)
			return nil
		})
		if err != nil || !slices.Equal(exported, people) {
			t.Errorf("folded export: %v, %v, want %v", exported, err, people)
		}
	})
}

// The partial index's WHERE is the definition's negation word for word:
// otherwise neither planner would use it and the folded page would walk the
// housekeeping it skips.
func TestHousekeepingIndexMatchesTheDefinition(t *testing.T) {
	for _, d := range []string{"sqlite", "postgres"} {
		b, err := os.ReadFile("migrations/" + d + "/00004_people.sql")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), " WHERE NOT ("+ledger.HousekeepingSQL+");") {
			t.Errorf("%s's 00004_people.sql does not index WHERE NOT (HousekeepingSQL)", d)
		}
	}
}

// The folded list's query is planned on the partial index, on both backends.
func TestFoldedListUsesThePeopleIndex(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, ledger.Options{})
		appendAll(t, s, housekeepingCases()...)
		text, args := ledger.QuerySQL(dsn, ledger.Query{FoldHousekeeping: true, Kinds: []string{"crds", "flowschemas", "csrs"}})
		db := rawDB(t, dsn)
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		explain := "EXPLAIN QUERY PLAN "
		if !strings.HasPrefix(dsn, "sqlite:") {
			explain = "EXPLAIN "
			// A table of 19 rows is read whole by preference; what this
			// asks is whether the index can serve the query at all.
			if _, err := conn.ExecContext(ctx, "SET enable_seqscan = off"); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := conn.QueryContext(ctx, explain+text, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var plan []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				switch v := v.(type) {
				case string:
					plan = append(plan, v)
				case []byte:
					plan = append(plan, string(v))
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if p := strings.Join(plan, "\n"); !strings.Contains(p, "ledger_entries_people") {
			t.Errorf("the folded list is not planned on ledger_entries_people:\n%s", p)
		}
	})
}
